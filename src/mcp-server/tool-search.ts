import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import { callerKey as learnKey, globToRegExp, sessionKey, type Caller } from '../auth/caller.js';
import type { Config } from '../config/schema.js';
import { GatewayError } from '../errors.js';
import type { Gateway } from '../gateway.js';
import { rankFor } from '../prefilter/for-caller.js';
import type { OnSearch } from '../prefilter/search-events.js';
import { listable } from '../tools/listable.js';
import type { CompiledTool } from '../tools/types.js';
import { FIND_TOOLS, findToolsTool, parseSearch } from './find-tools.js';
import type { McpNames } from './names.js';
import { errorResult } from './results.js';
import { ListChangedCoalescer, SearchRate, type ListChangedSink } from './search-limits.js';
import { MemorySearchStore, type SearchStateStore } from './search-state.js';

export { FIND_TOOLS } from './find-tools.js';

/** mcp.toolSearch for one caller, globs compiled. */
interface Settings {
  enabled: boolean;
  k: number;
  alwaysList: readonly RegExp[];
}

type KeyEntry = Config['auth']['keys'][number];

export interface ToolSearchDeps {
  gw: Gateway;
  names: McpNames;
  /** The MCP form of a tool, as tools/list shows it (server.ts). */
  listed: (t: CompiledTool) => Tool;
  store?: SearchStateStore;
  onSearch?: OnSearch | undefined;
  now?: () => number;
}

/** Where a find_tools call came from: its session (2025 era, /sse) and how to tell it its list changed. */
export interface SearchContext {
  /** sessionTag() of the session; undefined in 2026-07-28 (no session). */
  tag: string | undefined;
  listChanged?: ListChangedSink | undefined;
}

/**
 * The tool-search mode of /mcp (SPEC §6, mcp.toolSearch, per key too): tools/list shows
 * `find_tools`, the alwaysList tools and the session's last search's candidates; find_tools
 * ranks with the prefilter over what the caller may be offered and tells the session its list
 * changed. In 2026-07-28 there is no session: the result carries the candidates' input schemas and
 * the list stays find_tools + alwaysList (README, "Tool search for MCP clients").
 */
export class ToolSearch {
  private readonly global: Settings;
  private readonly perKey = new Map<string, Settings>();
  private readonly store: SearchStateStore;
  private readonly rate: SearchRate;
  private readonly notices: ListChangedCoalescer;

  constructor(private readonly deps: ToolSearchDeps) {
    const { toolSearch } = deps.gw.config.mcp;
    this.global = { enabled: toolSearch.enabled, k: toolSearch.k, alwaysList: toolSearch.alwaysList.map(globToRegExp) };
    for (const key of deps.gw.config.auth.keys) if (key.toolSearch) this.perKey.set(key.id, this.override(key.toolSearch));
    const now = deps.now ?? Date.now;
    this.store = deps.store ?? new MemorySearchStore(undefined, now);
    this.rate = new SearchRate(undefined, now);
    this.notices = new ListChangedCoalescer(250, now);
  }

  /** Whether any caller may get the mode (else /mcp runs as before, with no hook taken). */
  get anyEnabled(): boolean {
    return this.global.enabled || [...this.perKey.values()].some((s) => s.enabled);
  }

  private override(o: NonNullable<KeyEntry['toolSearch']>): Settings {
    return { enabled: o.enabled ?? this.global.enabled, k: o.k ?? this.global.k, alwaysList: o.alwaysList ? o.alwaysList.map(globToRegExp) : this.global.alwaysList };
  }

  /** A key's own settings (an access token's caller has no key entry: the global ones). */
  private settings(caller: Caller): Settings {
    return (caller.identity ? undefined : this.perKey.get(caller.id)) ?? this.global;
  }

  enabledFor(caller: Caller): boolean {
    return this.settings(caller).enabled;
  }

  /** A tools/call this module answers: find_tools, in the mode. */
  handles(caller: Caller, name: string): boolean {
    return name === FIND_TOOLS && this.enabledFor(caller);
  }

  /** The tools/list of a caller in the mode (undefined when the mode is off for it). */
  async list(caller: Caller, tag: string | undefined): Promise<Tool[] | undefined> {
    const s = this.settings(caller);
    if (!s.enabled) return undefined;
    const { gw, names } = this.deps;
    const registry = gw.registry;
    const shown = new Set<CompiledTool>();
    for (const t of registry.tools) {
      if (listable(caller, t) && s.alwaysList.some((re) => re.test(t.name) || re.test(names.of(t)))) shown.add(t);
    }
    const record = tag === undefined ? undefined : await this.store.get(tag);
    for (const name of record?.tools ?? []) {
      const t = registry.get(name);
      if (t && listable(caller, t)) shown.add(t); // a tool hidden or held since the search is not shown
    }
    const real = [...shown].map(this.deps.listed).filter((t) => t.name !== FIND_TOOLS); // the gateway's own name wins
    return [findToolsTool(s.k, tag !== undefined), ...real];
  }

  /** A find_tools call: an answer for the model, never a throw. */
  async call(caller: Caller, args: Record<string, unknown>, ctx: SearchContext): Promise<CallToolResult> {
    const { gw, names } = this.deps;
    const r = { registry: gw.registry, caller, names };
    const s = this.settings(caller);
    const parsed = parseSearch(args, s.k);
    if (parsed instanceof GatewayError) return errorResult(parsed, r, FIND_TOOLS);
    const callerKey = sessionKey(caller);
    const wait = this.rate.take(ctx.tag ?? `caller:${callerKey}`);
    if (wait > 0) {
      const message = `Too many searches in a short time. Wait ${wait} s, or use the tools already found.`;
      return errorResult(new GatewayError('RATE_LIMITED', message, { modelMessage: message, retryAfterSeconds: wait }), r, FIND_TOOLS);
    }
    const ranked = rankFor(gw.registry, gw.health, caller, parsed.query, { k: parsed.k, learned: gw.learner?.boost }); // prefilter.learn's terms, as /v1/route
    const tools = ranked.map((x) => x.tool);
    if (ctx.tag !== undefined && tools.length > 0) await this.remember(ctx, tools);
    if (ctx.tag !== undefined && this.deps.onSearch) {
      try {
        this.deps.onSearch({ source: 'find_tools', sessionTag: ctx.tag, callerKey: learnKey(caller), query: parsed.query, candidates: tools.map((t) => t.name) });
      } catch {
        // a listener's failure is not the model's
      }
    }
    return this.answer(parsed.query, tools, ctx.tag !== undefined);
  }

  /** The session's candidates are now these; the session hears of it when they differ from before. */
  private async remember(ctx: SearchContext, tools: CompiledTool[]): Promise<void> {
    const tag = ctx.tag as string;
    const names = tools.map((t) => t.name);
    const before = await this.store.get(tag);
    await this.store.set(tag, { tools: names, at: (this.deps.now ?? Date.now)() });
    const same = before !== undefined && before.tools.length === names.length && before.tools.every((n, i) => n === names[i]);
    if (!same && ctx.listChanged) this.notices.changed(tag, ctx.listChanged);
  }

  private answer(query: string, tools: CompiledTool[], inSession: boolean): CallToolResult {
    const quoted = JSON.stringify(query.length > 80 ? `${query.slice(0, 80)}…` : query);
    if (tools.length === 0) {
      return { content: [{ type: 'text', text: `No tool matched ${quoted}. Search again with other words for what you want to do (not a tool's name).` }], structuredContent: { candidates: [] }, isError: false };
    }
    const listed = tools.map(this.deps.listed);
    const candidates = listed.map((t) => ({ name: t.name, description: t.description ?? '', ...(inSession ? {} : { inputSchema: t.inputSchema }) }));
    const lines = candidates.map((c) => `- ${c.name}: ${c.description}${inSession ? '' : `\n  arguments (JSON Schema): ${JSON.stringify(c.inputSchema)}`}`);
    const next = inSession
      ? 'They are now in your tool list with their input schemas: call the one that fits.'
      : 'Call the one that fits by its name, with arguments matching its schema.';
    return { content: [{ type: 'text', text: `Tools for ${quoted}, best first:\n${lines.join('\n')}\n${next}` }], structuredContent: { candidates }, isError: false };
  }

  close(): void {
    this.notices.close();
  }
}
