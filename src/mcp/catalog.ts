import { Cancel } from '../util/cancel.js';
import type { Tool } from '@modelcontextprotocol/client';
import { auditRecord } from '../audit/record.js';
import type { AuditSink } from '../audit/types.js';
import type { Config } from '../config/schema.js';
import type { ReadinessCheck } from '../readiness.js';
import type { McpServerEntry } from '../tools/mcp-file.js';
import { Registry } from '../tools/registry.js';
import { createAjv } from '../util/ajv.js';
import { canonicalJson } from '../util/hash.js';
import type { FileProblem } from '../util/source.js';
import { describeError } from './errors.js';
import { importedToolName, importServerTools, localToolName, passthroughClashes, type ImportResult } from './import.js';
import { listPassthroughNames, type PassthroughNames } from './passthrough.js';
import { PinBook, type PinChange } from './pins.js';
import { auditFindings, omittedFindings } from './hold-view.js';
import { findingKinds } from '../tools/definition-findings.js';
import type { McpPool } from './pool.js';

export interface McpCatalogDeps {
  readonly pool: McpPool;
  readonly defaults: Config['defaults'];
  readonly audit: AuditSink;
  /** The gateway's serialized reload, which builds the next generation through compose(). */
  readonly reload: () => Promise<unknown>;
  readonly log?: { warn(obj: object, msg: string): void } | undefined;
  /** Bound of one `tools/list` import, connecting included. Default 30000. */
  readonly listTimeoutMs?: number;
}

interface ServerState {
  entry: McpServerEntry;
  readonly pins: PinBook;
  /** The last `tools/list`, once one succeeded. */
  listing: readonly Tool[] | undefined;
  importing: Promise<void> | undefined;
  /** Asked to import again while an import ran. */
  again: boolean;
  removed: boolean;
  /** Its tools are in a generation built since the last import. */
  served: boolean;
  memo: { key: string; result: ImportResult } | undefined;
  /** When its last `tools/list` began (imports are spaced by REIMPORT_SPACING_MS). */
  listedAt: number | undefined;
  /** With `prefix: ""`: its resource URIs, templates and prompt names (clashes are problems of the later file). */
  passthrough?: PassthroughNames | undefined;
}

/**
 * The least time between two imports of one server. Notifications that come meanwhile make one
 * import after it: a server flooding `list_changed` (and changing its list each time) costs a
 * listing, a generation and its audit records twice a second, not as fast as it can answer.
 */
const REIMPORT_SPACING_MS = 500;

/**
 * The MCP side of the registry: keeps the pool's servers in step with the files of each
 * generation, imports each server's tools (`tools/list`) in the background, again on
 * `list_changed` or after a restart, pins their definitions, and asks the gateway for a new
 * generation whenever an import changed something. compose() merges the imported tools into a
 * generation built from tools.d.
 */
export class McpCatalog {
  private readonly servers = new Map<string, ServerState>();
  private readonly busy = new Set<Promise<unknown>>();
  private readonly ajv = createAjv();
  private closed = false;

  constructor(private readonly deps: McpCatalogDeps) {
    deps.pool.on('toolsChanged', ({ server }) => this.refresh(server));
    // A server whose import failed (not connected yet) is imported once it is ready.
    deps.pool.on('state', ({ server, state }) => {
      const s = this.servers.get(server);
      if (state === 'ready' && s && !s.listing && !s.importing) this.refresh(server);
    });
    // A server without prefix whose resources or prompts changed is imported again (its clashes may have).
    deps.pool.on('passthrough', ({ server, notification }) => {
      if (notification.method.endsWith('/list_changed') && this.servers.get(server)?.passthrough) this.refresh(server);
    });
  }

  /**
   * The next generation: the tools of `files`, then each server's imported tools (a name a file
   * tool already has stays the file's; the import is reported against the server's file).
   */
  compose(files: Registry, generation: number): Registry {
    this.sync(files.servers);
    const tools = [...files.tools];
    const problems: FileProblem[] = [...files.problems];
    const names = new Map(tools.flatMap((t) => [[t.name, t.source.file] as const, [t.providerName, t.source.file] as const]));
    for (const entry of files.servers) {
      const s = this.servers.get(entry.spec.name);
      if (!s?.listing) continue;
      s.served = true;
      const result = this.imported(s);
      problems.push(...result.problems);
      for (const t of result.tools) {
        const clash = names.get(t.name) ?? names.get(t.providerName);
        if (clash !== undefined) {
          problems.push({ file: entry.file, path: entry.pointer, message: `imported tool '${t.name}' clashes with the one defined in ${clash}` });
          continue;
        }
        names.set(t.name, entry.file).set(t.providerName, entry.file);
        tools.push(t);
      }
    }
    problems.push(...passthroughClashes(files.servers.map((entry) => ({ entry, names: this.servers.get(entry.spec.name)?.passthrough }))));
    return new Registry(generation, new Date().toISOString(), tools, problems, files.servers, files.warnings, files.openapi);
  }

  /** /readyz: every prestart server connected and its tools imported. */
  readiness(): ReadinessCheck {
    const waiting = [...this.servers.values()]
      .filter((s) => s.entry.spec.prestart === true && !(s.served && this.deps.pool.status(s.entry.spec.name)?.state === 'ready'))
      .map((s) => s.entry.spec.name);
    if (waiting.length > 0) return { ready: false, state: `waiting for ${waiting.join(', ')}` };
    return { ready: true, state: this.servers.size === 0 ? 'none' : 'ready' };
  }

  /** Resolves when no import (and no reload one asked for) is running: tests and tools wait on it. */
  async settled(): Promise<void> {
    while (this.busy.size > 0) await Promise.allSettled([...this.busy]);
  }

  /** An admin accepts the held definition of a server's tool; undefined when none is held. */
  accept(server: string, tool: string): PinChange | undefined {
    return this.servers.get(server)?.pins.accept(tool);
  }

  /** Stops importing, ends every session (no child process is left) and waits for imports to end. */
  async close(): Promise<void> {
    this.closed = true;
    await this.deps.pool.close();
    await this.settled();
  }

  /** Takes the servers of a new generation: only changed connections restart; removed servers end. */
  private sync(entries: readonly McpServerEntry[]): void {
    if (this.closed) return;
    const wanted = new Set(entries.map((e) => e.spec.name));
    for (const [name, s] of this.servers) {
      if (wanted.has(name)) continue;
      s.removed = true;
      this.servers.delete(name);
      this.track(this.deps.pool.removeServer(name));
    }
    for (const entry of entries) {
      const name = entry.spec.name;
      const s = this.servers.get(name);
      if (!s) {
        this.servers.set(name, { entry, pins: new PinBook(), listing: undefined, importing: undefined, again: false, removed: false, served: false, memo: undefined, listedAt: undefined });
        this.track(this.deps.pool.updateServer(entry.spec));
      } else {
        const changed = s.entry.hash !== entry.hash;
        s.entry = entry; // the same server may have moved to another file
        if (changed) this.track(this.deps.pool.updateServer(entry.spec)); // a changed connection restarts, and its new session re-imports
        if (changed) this.record(s, s.pins.acceptAll(entry.spec.trustChanges ?? false, entry.spec.acceptDefinitions));
      }
      // New, or never imported yet (a reload is the operator's way to retry a failed import).
      if (!this.servers.get(name)?.listing) this.refresh(name);
    }
  }

  private imported(s: ServerState): ImportResult {
    const listed = s.pins.listed(s.listing ?? []);
    const key = JSON.stringify([s.entry.file, s.entry.pointer, s.entry.hash, listed.map((l) => [l.def.name, l.hash, l.held?.newHash])]);
    if (s.memo?.key !== key) s.memo = { key, result: importServerTools(s.entry, listed, { defaults: this.deps.defaults, ajv: this.ajv }) };
    return s.memo.result;
  }

  private refresh(name: string): void {
    const s = this.servers.get(name);
    if (!s || this.closed) return;
    if (s.importing) {
      s.again = true;
      return;
    }
    s.importing = this.importLoop(s).finally(() => {
      s.importing = undefined;
    });
    this.track(s.importing);
  }

  private async importLoop(s: ServerState): Promise<void> {
    const name = s.entry.spec.name;
    do {
      s.again = false;
      const wait = s.listedAt === undefined ? 0 : s.listedAt + REIMPORT_SPACING_MS - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (s.removed || this.closed) return;
      s.listedAt = Date.now();
      let tools: Tool[];
      try {
        tools = await this.list(name);
      } catch (err) {
        if (!this.closed && !s.removed) this.deps.log?.warn({ server: name, error: describeError(err) }, 'MCP server tools not imported (yet)');
        continue; // again if something happened meanwhile; else at the next ready state, list_changed or reload
      }
      if (s.removed || this.closed) return;
      const names = await this.passthroughNames(s);
      const namesChanged = canonicalJson(names ?? null) !== canonicalJson(s.passthrough ?? null);
      s.passthrough = names;
      // A restart usually brings the same list: nothing to rebuild then.
      if (s.listing && canonicalJson(s.listing) === canonicalJson(tools)) {
        if (namesChanged) await this.deps.reload();
        continue;
      }
      this.record(s, s.pins.observe(tools, s.entry.spec.trustChanges ?? false, s.entry.spec.acceptDefinitions));
      s.listing = tools;
      s.served = false;
      await this.deps.reload();
    } while (s.again && !s.removed && !this.closed);
  }

  /** A server without prefix: what it gives through /mcp under its own names (undefined for others, or when it cannot say). */
  private async passthroughNames(s: ServerState): Promise<PassthroughNames | undefined> {
    if ((s.entry.spec.prefix ?? s.entry.spec.name) !== '') return undefined;
    const timeout = this.deps.listTimeoutMs ?? 30000;
    try {
      const session = await this.deps.pool.upstream(s.entry.spec.name, Date.now() + timeout);
      return await listPassthroughNames(session.sdk, timeout);
    } catch {
      return s.passthrough;
    }
  }

  /**
   * `tools/list`, connecting first if needed. A failed connect ends the wait at once (the server
   * retries with backoff and its next ready state imports), so settled() is not held by a
   * server that cannot start.
   */
  private async list(name: string): Promise<Tool[]> {
    const { pool } = this.deps;
    const status = pool.status(name);
    if (status?.state === 'restarting') throw new Error(`MCP server '${name}' is restarting${status.lastError ? `: ${status.lastError}` : ''}`);
    const failed = new Cancel();
    const onState = (e: { server: string; state: string }) => {
      if (e.server === name && (e.state === 'restarting' || e.state === 'closed')) failed.abort(new Error(`MCP server '${name}' is ${e.state}`));
    };
    pool.on('state', onState);
    try {
      return await pool.listTools(name, { deadline: Date.now() + (this.deps.listTimeoutMs ?? 30000), cancel: failed });
    } finally {
      pool.off('state', onState);
    }
  }

  /**
   * Every changed definition is audited with both hashes, held or (trusted server) accepted; a
   * definition held for its findings (tool poisoning) is audited with them (kinds, where, offsets).
   */
  private record(s: ServerState, changes: readonly PinChange[]): void {
    const server = s.entry.spec.name;
    for (const c of changes) {
      const tool = importedToolName(s.entry.spec, localToolName(c.tool));
      const { oldHash, newHash, status, reason } = c;
      const action = c.oldHash === null ? 'tool-poisoned' : 'tool-changed';
      const findings = auditFindings(c.findings);
      this.deps.audit.write(auditRecord({ event: 'reload', action, tool, server, mcpTool: c.tool, oldHash, newHash, status, reason, ...(findings.length > 0 ? { findings } : {}), ...omitted(c) }));
      const what = reason === 'poisoned' ? `MCP tool definition has ${findingKinds(c.findings).join(' and ')} findings` : 'MCP tool definition changed';
      this.deps.log?.warn({ tool, oldHash, newHash, status, ...(findings.length > 0 ? { findings } : {}) }, `${what}: ${status}`);
    }
  }

  private track(p: Promise<unknown>): void {
    const tracked = p.catch(() => undefined).finally(() => this.busy.delete(tracked));
    this.busy.add(tracked);
  }
}

function omitted(c: PinChange): { findingsOmitted?: number } {
  const n = omittedFindings(c.findings);
  return n > 0 ? { findingsOmitted: n } : {};
}
