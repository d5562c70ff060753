import { ProtocolErrorCode, type ClientCapabilities, type Server, type ServerContext } from '@modelcontextprotocol/server';
import type { Gateway } from '../gateway.js';
import type { ClientChannel, Refusal, ServerRequestKind } from '../mcp/server-requests.js';

/**
 * The downstream half of server-to-client requests (mcp/server-requests.ts is the pool's half):
 * the MCP client that made a call through /mcp, as the pool asks it.
 */

const NAMES: Record<ServerRequestKind, string> = { sampling: 'sampling', elicitation: 'elicitation', roots: 'roots' };

/**
 * Why a client with these capabilities cannot take the request: no such capability at all is
 * -32601 (what a client without a handler answers), an elicitation mode or sampling tool use it did
 * not declare is -32602 (as the spec names for a mode not declared). Undefined: it can.
 */
export function lacking(caps: ClientCapabilities | undefined, kind: ServerRequestKind, params: Record<string, unknown>): Refusal | undefined {
  const declared = caps?.[kind];
  if (declared === undefined || declared === null) {
    return { code: ProtocolErrorCode.MethodNotFound, message: `the MCP client that made this call does not support ${NAMES[kind]} (it did not declare the capability)` };
  }
  if (kind === 'elicitation') {
    const e = declared as { form?: unknown; url?: unknown };
    const mode = params['mode'] === 'url' ? 'url' : 'form';
    // An empty `elicitation: {}` means form mode (the spec's default).
    const ok = mode === 'url' ? e.url !== undefined : e.form !== undefined || e.url === undefined;
    if (!ok) return { code: ProtocolErrorCode.InvalidParams, message: `the MCP client that made this call does not support ${mode}-mode elicitation` };
  }
  if (kind === 'sampling' && (params['tools'] !== undefined || params['toolChoice'] !== undefined) && (declared as { tools?: unknown }).tools === undefined) {
    return { code: ProtocolErrorCode.InvalidParams, message: 'the MCP client that made this call does not support tool use in sampling' };
  }
  return undefined;
}

/** A 2025 session's client: the request goes on the stream of its tools/call (related to it), its progress and cancellation with it. */
export function sessionChannel(server: Server, ctx: ServerContext): ClientChannel {
  return {
    refusal: (kind, params) => lacking(server.getClientCapabilities(), kind, params),
    request: (method, params, o) =>
      ctx.mcpReq.send({ method, params } as { method: 'roots/list'; params: Record<string, unknown> }, {
        signal: o.signal,
        timeout: o.timeoutMs,
        ...(o.onProgress ? { onprogress: o.onProgress } : {}),
      }) as unknown as Promise<Record<string, unknown>>,
  };
}

/**
 * Whether a plain tools/call on a 2025 session may be answered as one JSON response (fast-call.ts):
 * not when the tool has an MCP backend and the client declared a capability its server may ask for,
 * since the server's request must travel on the call's stream.
 */
export function mayAskClient(gw: Gateway, server: Server, name: string): boolean {
  const caps = server.getClientCapabilities();
  if (!caps?.sampling && !caps?.elicitation && !caps?.roots) return false;
  const tool = gw.registry.get(name);
  return tool === undefined || tool.backends.some((b) => b.target.kind === 'mcp');
}
