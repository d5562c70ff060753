import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CallToolResult, InputRequiredResult } from '@modelcontextprotocol/server';
import type { ModernGate } from './input-required.js';
import { SESSION_REVISIONS } from './era.js';
import { GatewayError } from '../errors.js';
import type { McpServerDeps } from './server.js';
import { header, runMcpCall } from './server.js';
import { ClientWatch, type CallSlot } from '../pipeline/client-gone.js';
import type { McpSession } from './sessions.js';
import type { OutgoingHttpHeaders } from 'node:http';
import type { ListChangedSink } from './search-limits.js';

type RequestId = string | number;

/** A tools/call that needs no stream: answered as one JSON response straight from the pipeline. */
export interface FastCall {
  id: RequestId;
  name: string;
  args: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The Streamable HTTP transport lets a server answer a POSTed request with a single JSON response
 * instead of an SSE stream. toolgate does so for a plain `tools/call` on an established session
 * when nothing needs a stream: no progress token, and no tool approvable by elicitation configured
 * (that asks the client mid-call). Everything else, malformed messages included, goes through the
 * SDK's transport, which answers with its own checks and errors.
 */
export function asFastCall(req: FastifyRequest, msg: unknown): FastCall | undefined {
  const call = plainToolCall(msg);
  if (!call) return undefined;
  const accept = header(req.headers, 'accept') ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  const version = header(req.headers, 'mcp-protocol-version');
  if (version !== undefined && !SESSION_REVISIONS.includes(version)) return undefined;
  return call;
}

/** A well-formed `tools/call` request without a progress token, or undefined. */
export function plainToolCall(msg: unknown): FastCall | undefined {
  if (!isObject(msg) || msg['jsonrpc'] !== '2.0' || msg['method'] !== 'tools/call') return undefined;
  const id = msg['id'];
  const params = msg['params'];
  if ((typeof id !== 'string' && typeof id !== 'number') || !isObject(params)) return undefined;
  const name = params['name'];
  const args = params['arguments'] ?? {};
  if (typeof name !== 'string' || !isObject(args)) return undefined;
  const meta = params['_meta'];
  if (isObject(meta) && meta['progressToken'] !== undefined) return undefined;
  return { id, name, args };
}

/** A session's list_changed notices go to its standalone stream (a JSON answer has no stream of its own). */
function sessionListChanged(session: McpSession): ListChangedSink {
  const send = () => void session.server.sendToolListChanged().catch(() => undefined);
  return { now: send, later: send };
}

/** In-flight fast calls per session, so a client's `notifications/cancelled` reaches them too. */
const inFlight = new WeakMap<McpSession, Map<RequestId, CallSlot>>();

/** A `notifications/cancelled` for a fast call of this session cancels it (the SDK, which never saw the request, ignores it). */
export function cancelFastCall(session: McpSession, msg: unknown): void {
  const id = cancelledRequestId(msg);
  if (id !== undefined) inFlight.get(session)?.get(id)?.cancel(clientCancelled());
}

/** The request a `notifications/cancelled` names, or undefined for any other message. */
export function cancelledRequestId(msg: unknown): RequestId | undefined {
  if (!isObject(msg) || msg['method'] !== 'notifications/cancelled' || !isObject(msg['params'])) return undefined;
  const id = msg['params']['requestId'];
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

export function clientCancelled(): GatewayError {
  return new GatewayError('UNAVAILABLE', 'the MCP client cancelled the call');
}

/**
 * Runs the call and sends `{ jsonrpc, id, result }`; the client leaving, or cancelling, cancels it.
 *
 * The status line and headers go out before the call runs (its outcome, a tool error included, is
 * a JSON-RPC result under 200 whatever happens): the client's HTTP stack takes them while the tool
 * works, the overlap the SSE transports get from their 202, and the body follows (chunked). The
 * reply is hijacked for that, so the drain's onSend hook does not run: its count is released here
 * (onResponse hooks, the request log, still run when the response finishes).
 */
export interface FastCallEra {
  /** The 2025 session the call belongs to; none in 2026-07-28. */
  session?: McpSession | undefined;
  /** 2026-07-28: a gated call may answer with an input request. */
  modern?: ModernGate | undefined;
  /** The result as the era's wire carries it. */
  encode?: (r: CallToolResult | InputRequiredResult) => unknown;
}

export async function answerFastCall(deps: McpServerDeps, call: FastCall, req: FastifyRequest, reply: FastifyReply, era: FastCallEra): Promise<void> {
  const { session, modern, encode = (r) => r } = era;
  // A 2025 session's calls are found again by a notifications/cancelled; a 2026-07-28 call is cancelled by closing its response.
  let calls = session ? inFlight.get(session) : undefined;
  if (session && !calls) inFlight.set(session, (calls = new Map()));
  const res = reply.raw;
  const watch = new ClientWatch(res);
  calls?.set(call.id, watch);
  reply.hijack();
  reply.header('content-type', 'application/json');
  if (session) reply.header('mcp-session-id', session.id);
  res.writeHead(200, reply.getHeaders() as OutgoingHttpHeaders);
  res.flushHeaders();
  let body: string;
  try {
    const listChanged = session ? sessionListChanged(session) : undefined;
    const result = await runMcpCall(deps, req.caller, call.name, call.args, { requestId: req.id, headers: req.headers, sessionId: session?.id, onClientGone: watch, modern, listChanged });
    body = JSON.stringify({ jsonrpc: '2.0', id: call.id, result: encode(result) });
  } catch (e) {
    // runMcpCall answers every failure as a tool result; this is a bug's last resort, not a path.
    req.log.error({ err: e }, 'an MCP tools/call failed inside the gateway');
    body = JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: -32603, message: 'Internal error' } });
  } finally {
    watch.release();
    if (calls?.get(call.id) === watch) calls.delete(call.id);
  }
  res.end(body);
  req.work?.leave();
}
