import { Server, type CallToolResult, type InputRequiredResult, type ServerContext, type Tool } from '@modelcontextprotocol/server';
import { type Caller } from '../auth/caller.js';
import { listable } from '../tools/listable.js';
import type { Gateway } from '../gateway.js';
import type { ProgressNote } from '../adapters/types.js';
import type { CallOutcome } from '../pipeline/index.js';
import { toMcp } from '../tools/formats.js';
import type { CompiledTool } from '../tools/types.js';
import { sha256Hex } from '../util/hash.js';
import { newId } from '../util/ids.js';
import { settleGate } from './approval.js';
import { SESSION_REVISIONS } from './era.js';
import { askModern, resumeModern, type ModernGate } from './input-required.js';
import { errorResult, pendingResult, toolResult, type ResultContext } from './results.js';
import type { McpNames } from './names.js';
import type { ClientGone } from '../pipeline/execute.js';
import { PASSTHROUGH_CAPABILITIES, type Passthrough } from './passthrough.js';
import { sessionKey } from '../auth/caller.js';
import type { ClientChannel } from '../mcp/server-requests.js';
import { sessionChannel } from './relay.js';
import { isRelayState, ParkedCall, resumeRelayed } from './relay-modern.js';

export interface McpServerDeps {
  gw: Gateway;
  /** mcp.elicitApproval.tools, compiled. */
  mayElicit: (tool: string) => boolean;
  /** mcp.toolNames: the names tools are listed (and gateway texts name them) by. */
  names: McpNames;
  /** Resources, prompts, completions and logging of the MCP servers (src/mcp-server/passthrough.ts). */
  passthrough?: Passthrough;
}

/** Which protocol era the server instance speaks: `legacy` (2024-11-05 … 2025-11-25, sessions) or `modern` (2026-07-28, per request). */
export type Era = 'legacy' | 'modern';

/** The MCP form of a tool (toMcp); MCP requires object schemas, so any other output schema is left out. */
function listed(t: CompiledTool, names: McpNames): Tool {
  const { outputSchema, ...rest } = toMcp(t);
  return {
    ...rest,
    name: names.of(t),
    inputSchema: { ...t.inputSchema, type: 'object' },
    ...(outputSchema && outputSchema['type'] === 'object' ? { outputSchema: { ...outputSchema, type: 'object' } } : {}),
  } as Tool;
}

/** The caller's tools in their MCP form. */
export function toolsFor(gw: Gateway, caller: Caller, names: McpNames): Tool[] {
  return gw.registry.tools.filter((t) => listable(caller, t)).map((t) => listed(t, names));
}

/** The MCP session as the pipeline's sessionId (loop detection, audit): a digest, so the audit log holds no live session id. */
export function sessionTag(sessionId: string | undefined): string | undefined {
  return sessionId === undefined ? undefined : `mcp:${sha256Hex(sessionId).slice(0, 16)}`;
}

export function header(headers: Readonly<Record<string, string | string[] | undefined>> | undefined, name: string): string | undefined {
  const v = headers?.[name];
  return Array.isArray(v) ? v[0] : v;
}

/** A web Request's headers as the pipeline reads them (lower-case names). */
export function headerRecord(req: Request | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  req?.headers.forEach((value, name) => (out[name] = value));
  return out;
}

/** Passes an upstream's progress on to the MCP client, when its request carried a progress token. */
function progressRelay(token: string | number | undefined, ctx: ServerContext): ((p: ProgressNote) => void) | undefined {
  if (token === undefined) return undefined;
  return (p) => {
    const params = { progressToken: token, progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), ...(p.message !== undefined ? { message: p.message } : {}) };
    void ctx.mcpReq.notify({ method: 'notifications/progress', params }).catch(() => undefined);
  };
}

/** The gateway as an MCP server names itself so in every era. */
export const SERVER_INFO = { name: 'toolgate', version: '0.1.0' };

const INSTRUCTIONS = 'Tools served through the toolgate gateway: calls are checked, may need approval, and are audited.';

/**
 * One MCP server (SDK v2) speaking for one caller (legacy: the revisions it negotiates, by default
 * /mcp's 2025 ones; an `initialize` naming another gets the newest of them, as the spec says): tools/list shows what that caller may see,
 * tools/call runs through the same pipeline as REST. A legacy instance serves one session (the SDK
 * binds a Server to one transport); a modern one serves one request.
 */
export function buildMcpServer(deps: McpServerDeps, caller: Caller, era: Era = 'legacy', versions: string[] = SESSION_REVISIONS): Server {
  const { gw } = deps;
  const server = new Server(
    SERVER_INFO,
    { capabilities: { tools: { listChanged: true }, ...PASSTHROUGH_CAPABILITIES }, instructions: INSTRUCTIONS, ...(era === 'modern' ? {} : { supportedProtocolVersions: versions }) },
  );

  server.setRequestHandler('tools/list', () => ({ tools: toolsFor(gw, caller, deps.names) }));
  deps.passthrough?.register(server, caller, era);

  server.setRequestHandler('tools/call', async (req, ctx): Promise<CallToolResult | InputRequiredResult> => {
    const headers = headerRecord(ctx.http?.req);
    const requestId = headers['x-request-id'] ?? newId('r');
    const name = req.params.name;
    const args = req.params.arguments ?? {};
    if (era === 'modern') {
      // Modern has no session: none is invented, so its audit records carry no sessionId.
      const gate: ModernGate = { deps, caller, requestId, canAsk: canElicitForm(server), capabilities: () => server.getClientCapabilities() };
      // The retry of a call whose MCP server asked its client something (relay-modern.ts).
      if (isRelayState(ctx.mcpReq.requestState())) return resumeRelayed(ctx, sessionKey(caller), (n) => gw.registry.get(n)?.name ?? n, name);
      const resumed = await resumeModern(gate, ctx, name);
      if (resumed) return resumed;
      return runMcpCall(deps, caller, name, args, {
        requestId,
        headers,
        sessionId: undefined,
        signal: ctx.mcpReq.signal,
        onProgress: progressRelay(req.params._meta?.progressToken, ctx),
        modern: gate,
      });
    }
    return runMcpCall(deps, caller, name, args, {
      requestId,
      headers,
      sessionId: ctx.sessionId,
      signal: ctx.mcpReq.signal,
      onProgress: progressRelay(req.params._meta?.progressToken, ctx),
      gate: { server, ctx },
    });
  });
  return server;
}

/** The client can show a form: in 2025 declared at initialize, in 2026-07-28 in each request's envelope (seeded by the SDK). */
export function canElicitForm(server: Server): boolean {
  return declaresForm(server.getClientCapabilities());
}

export function declaresForm(capabilities: { elicitation?: { form?: unknown; url?: unknown } } | undefined): boolean {
  const e = capabilities?.elicitation;
  // An empty `elicitation: {}` means form mode (the spec's default).
  return e !== undefined && (e.form !== undefined || e.url === undefined);
}

export interface McpCallOptions {
  requestId: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The transport's session id (legacy); hashed before it reaches the pipeline. */
  sessionId: string | undefined;
  signal?: AbortSignal | undefined;
  onClientGone?: ClientGone | undefined;
  onProgress?: ((p: ProgressNote) => void) | undefined;
  /** 2025: the session's server and request context, for an approval asked through elicitation. */
  gate?: { server: Server; ctx: ServerContext } | undefined;
  /** 2026-07-28: a gated call answers with an input request when the client can show a form. */
  modern?: ModernGate | undefined;
}

/** One tools/call of an MCP client through the pipeline, as a CallToolResult (failures included, as isError results). */
export async function runMcpCall(deps: McpServerDeps, caller: Caller, name: string, args: Record<string, unknown>, o: McpCallOptions & { modern?: undefined }): Promise<CallToolResult>;
export async function runMcpCall(deps: McpServerDeps, caller: Caller, name: string, args: Record<string, unknown>, o: McpCallOptions): Promise<CallToolResult | InputRequiredResult>;
export async function runMcpCall(deps: McpServerDeps, caller: Caller, name: string, args: Record<string, unknown>, o: McpCallOptions): Promise<CallToolResult | InputRequiredResult> {
  // The MCP server behind the tool may ask this client (sampling, elicitation, roots): 2025 on the
  // call's stream; 2026-07-28 by answering input_required while the call waits (relay-modern.ts).
  if (!o.modern) return runCall(deps, caller, name, args, { ...o, clientChannel: o.gate && sessionChannel(o.gate.server, o.gate.ctx) });
  const park = new ParkedCall(sessionKey(caller), deps.gw.registry.get(name)?.name ?? name, o.modern.capabilities ?? (() => undefined));
  return park.hold(() => runCall(deps, caller, name, args, { ...o, signal: park.signal, clientChannel: park.channel }), o.signal);
}

async function runCall(deps: McpServerDeps, caller: Caller, name: string, args: Record<string, unknown>, o: McpCallOptions & { clientChannel: ClientChannel | undefined }): Promise<CallToolResult | InputRequiredResult> {
  const { gw } = deps;
  const tag = o.modern ? undefined : sessionTag(o.sessionId);
  const r: ResultContext = { registry: gw.registry, caller, names: deps.names };
  gw.inFlight.begin(); // the shutdown drain waits for the call, whatever its stream does
  let out: CallOutcome;
  try {
    out = await gw.pipeline.call({
      toolName: name,
      args,
      sessionId: tag,
      caller,
      requestId: o.requestId,
      headers: o.headers,
      signal: o.signal,
      onClientGone: o.onClientGone,
      respond: 'sync', // an MCP client waits for its result (and hears progress when it asked)
      onProgress: o.onProgress,
      clientChannel: o.clientChannel,
    });
  } catch (e) {
    return errorResult(e, r, name);
  } finally {
    gw.inFlight.end();
  }
  if (out.status === 'ok') return toolResult(out.result, out.policy.findings);
  if (out.status === 'running') return toolResult({ content: [{ type: 'text', text: `Started in the background as call ${out.callId}.` }], isError: false });
  if (o.modern) return askModern(o.modern, out).catch((e: unknown) => errorResult(e, r, name));
  if (!o.gate) return pendingResult(out, deps.names.shown);
  const ctx = { gw, server: o.gate.server, ctx: o.gate.ctx, caller, mayElicit: deps.mayElicit, names: deps.names, requestId: o.requestId, sessionTag: tag ?? '-' };
  return settleGate(ctx, out).catch((e: unknown) => errorResult(e, r, name));
}
