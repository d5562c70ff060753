import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { canSee, type Caller } from '../auth/caller.js';
import type { Gateway } from '../gateway.js';
import type { ProgressNote } from '../adapters/types.js';
import type { CallOutcome } from '../pipeline/index.js';
import { toMcp } from '../tools/formats.js';
import type { CompiledTool } from '../tools/types.js';
import { sha256Hex } from '../util/hash.js';
import { newId } from '../util/ids.js';
import { settleGate } from './approval.js';
import { errorResult, pendingResult, toolResult } from './results.js';
import type { ClientGone } from '../pipeline/execute.js';

export interface McpServerDeps {
  gw: Gateway;
  /** mcp.elicitApproval.tools, compiled. */
  mayElicit: (tool: string) => boolean;
}

/** The MCP form of a tool (toMcp); MCP requires object schemas, so any other output schema is left out. */
function listed(t: CompiledTool): Tool {
  const { outputSchema, ...rest } = toMcp(t);
  return {
    ...rest,
    inputSchema: { ...t.inputSchema, type: 'object' },
    ...(outputSchema && outputSchema['type'] === 'object' ? { outputSchema: { ...outputSchema, type: 'object' } } : {}),
  };
}

/** The MCP session as the pipeline's sessionId (loop detection, audit): a digest, so the audit log holds no live session id. */
export function sessionTag(sessionId: string | undefined): string | undefined {
  return sessionId === undefined ? undefined : `mcp:${sha256Hex(sessionId).slice(0, 16)}`;
}

export function header(headers: Readonly<Record<string, string | string[] | undefined>> | undefined, name: string): string | undefined {
  const v = headers?.[name];
  return Array.isArray(v) ? v[0] : v;
}

type Extra = Parameters<Parameters<Server['setRequestHandler']>[1]>[1];

/** Passes an upstream's progress on to the MCP client, when its request carried a progress token. */
function progressRelay(token: string | number | undefined, extra: Extra): ((p: ProgressNote) => void) | undefined {
  if (token === undefined) return undefined;
  return (p) => {
    const params = { progressToken: token, progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), ...(p.message !== undefined ? { message: p.message } : {}) };
    void extra.sendNotification({ method: 'notifications/progress', params }).catch(() => undefined);
  };
}

/**
 * One MCP server per session (the SDK binds a Server to one transport), speaking for one caller:
 * tools/list shows what that caller may see, tools/call runs through the same pipeline as REST.
 */
export function buildMcpServer(deps: McpServerDeps, caller: Caller): Server {
  const { gw } = deps;
  const server = new Server(
    { name: 'toolgate', version: '0.1.0' },
    { capabilities: { tools: { listChanged: true } }, instructions: 'Tools served through the toolgate gateway: calls are checked, may need approval, and are audited.' },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: gw.registry.tools.filter((t) => canSee(caller, t)).map(listed) }));

  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const headers = extra.requestInfo?.headers;
    const requestId = header(headers, 'x-request-id') ?? newId('r');
    return runMcpCall(deps, caller, req.params.name, req.params.arguments ?? {}, {
      requestId,
      headers: headers ?? {},
      sessionId: extra.sessionId,
      signal: extra.signal,
      onProgress: progressRelay(req.params._meta?.progressToken, extra),
      gate: { server, relatedRequestId: extra.requestId, signal: extra.signal },
    });
  });
  return server;
}

export interface McpCallOptions {
  requestId: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  sessionId: string | undefined;
  signal?: AbortSignal | undefined;
  onClientGone?: ClientGone | undefined;
  onProgress?: ((p: ProgressNote) => void) | undefined;
  /** The session's server and request, for an approval asked through elicitation; without it a gated call's result names its confirmation. */
  gate?: { server: Server; relatedRequestId: string | number; signal: AbortSignal } | undefined;
}

/** One tools/call of an MCP client through the pipeline, as a CallToolResult (failures included, as isError results). */
export async function runMcpCall(deps: McpServerDeps, caller: Caller, name: string, args: Record<string, unknown>, o: McpCallOptions): Promise<CallToolResult> {
  const { gw } = deps;
  const tag = sessionTag(o.sessionId);
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
    });
  } catch (e) {
    return errorResult(e, gw.registry, name);
  } finally {
    gw.inFlight.end();
  }
  if (out.status === 'ok') return toolResult(out.result);
  if (out.status === 'running') return toolResult({ content: [{ type: 'text', text: `Started in the background as call ${out.callId}.` }], isError: false });
  if (!o.gate) return pendingResult(out);
  const ctx = { gw, server: o.gate.server, caller, mayElicit: deps.mayElicit, requestId: o.requestId, sessionTag: tag ?? '-', relatedRequestId: o.gate.relatedRequestId, signal: o.gate.signal };
  return settleGate(ctx, out).catch((e: unknown) => errorResult(e, gw.registry, name));
}
