import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { McpHandlers, McpRouteOptions } from './plugin.js';
import { globToRegExp, sessionKey } from '../auth/caller.js';
import { endAtExpiry } from '../auth/expiry.js';
import type { ReloadResult } from '../gateway.js';
import { jsonRpcError, toWebRequest, withOpeningComment } from './http.js';
import { isJsonContentType, SUPPORTED_PROTOCOL_VERSIONS, type ClientCapabilities } from '@modelcontextprotocol/server';
import { buildMcpServer, declaresForm, header } from './server.js';
import { mcpNames } from './names.js';
import { McpSessions, sessionLimits } from './sessions.js';
import { RedisSessionStore } from './session-store.js';
import { catalogDigest, initParamsOf, levelSetBy, refuseSharedGet, subscriptionsChangedBy } from './session-http.js';
import { sharedStream } from './shared-stream.js';
import { answerFastCall, asFastCall, cancelFastCall } from './fast-call.js';
import { LegacySse } from './legacy-sse.js';
import { ListenStreams } from './listen-streams.js';
import { MAX_NESTING, nestsDeeperThan } from '../util/depth.js';
import { isLegacy, opensSession } from './era.js';
import { ModernMcp, MODERN_REVISION } from './modern.js';
import { asModernFastCall, envelopeCapabilities, modernResult } from './modern-fast-call.js';
import { mayAskClient } from './relay.js';
import type { ModernGate } from './input-required.js';
import { refusalReason, type ProtocolErrorReason } from './protocol-errors.js';
import { toolSearchFor } from './tool-search-setup.js';
import { Passthrough } from './passthrough.js';


/**
 * The request to the SDK's transport. A POST body that parses as JSON is handed over parsed (no
 * body stream to build and read again); one that does not goes as it came, for the SDK's own
 * JSON-RPC parse error.
 */
function handOver(transport: { handleRequest(req: Request, opts?: { parsedBody?: unknown }): Promise<Response> }, req: FastifyRequest, parsed: Parsed | undefined): Promise<Response> {
  return parsed ? transport.handleRequest(toWebRequest(req, false), { parsedBody: parsed.value }) : transport.handleRequest(toWebRequest(req));
}

type Parsed = { value: unknown };

/** A POST's JSON body, parsed once; undefined for anything else (the SDK reads and judges it). */
function parseBody(req: FastifyRequest): Parsed | undefined {
  if (req.method !== 'POST' || typeof req.body !== 'string' || !isJsonContent(req.headers['content-type'])) return undefined;
  try {
    return { value: JSON.parse(req.body) as unknown };
  } catch {
    return undefined;
  }
}

/** Aborts when the response closes before it was sent in full (the client hung up); the gateway may abort it too (ending a listen stream). */
function clientGone(reply: FastifyReply): AbortController {
  const ac = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) ac.abort();
  });
  return ac;
}

const isListen = (msg: unknown): boolean => msg !== null && typeof msg === 'object' && (msg as Record<string, unknown>)['method'] === 'subscriptions/listen';

/**
 * A message the MCP SDK would overflow its stack reading (its schemas recurse into results and
 * params): refused as an invalid request. A tools/call is not: its arguments go to the pipeline,
 * whose depth limit answers with a tool error and an audit record.
 */
function tooDeep(msg: unknown): boolean {
  if (Array.isArray(msg)) return msg.some(tooDeepMessage); // a batch: one level of array, its messages judged alone
  return tooDeepMessage(msg);
}

function tooDeepMessage(msg: unknown): boolean {
  const isCall = msg !== null && typeof msg === 'object' && (msg as Record<string, unknown>)['method'] === 'tools/call';
  return !isCall && nestsDeeperThan(msg, MAX_NESTING);
}

/** JSON as the SDK judges it (the media type's essence): a body the fast paths take is one the SDK would take too. */
function isJsonContent(type: string | undefined): boolean {
  return type !== undefined && isJsonContentType(type);
}

/** The handlers behind the routes of plugin.ts: loaded with the MCP server SDK on the first /mcp, /sse or /messages request. */
export function mcpHandlers(app: FastifyInstance, opts: McpRouteOptions): McpHandlers {
  const { gw } = opts;
  const { config } = gw;
  const elicitable = config.mcp.elicitApproval.tools.map(globToRegExp);
  const names = mcpNames(config.mcp.toolNames, () => gw.registry);
  const toolSearch = toolSearchFor(gw, names, opts.onSearch);
  const passthrough = new Passthrough(gw, app.log);
  const deps = { gw, mayElicit: (tool: string) => elicitable.some((re) => re.test(tool)), names, toolSearch, passthrough };
  const LIMITS = sessionLimits(config.mcp.sessions);
  // With state.redis a 2025 session lives in Redis and any replica serves it; else in this one's memory.
  const store = config.state.redis ? new RedisSessionStore(config.state.redis, LIMITS.idleMs) : undefined;
  const sessions = new McpSessions((caller) => buildMcpServer(deps, caller), LIMITS, store);
  // Plain tools/call POSTs are answered as JSON straight from the pipeline: in 2026-07-28 always,
  // in 2025 unless a tool may be approved by the client's user (that asks on the request's stream).
  const fastCalls = elicitable.length === 0;

  // Clients that speak only the legacy SSE transport: GET /sse, POST /messages (any 2024/2025
  // revision the SDK knows: clients negotiate over this transport as they do over stdio).
  const legacy = new LegacySse(deps, (caller) => buildMcpServer(deps, caller, 'legacy', SUPPORTED_PROTOCOL_VERSIONS), LIMITS.perCaller);

  // 2026-07-28 requests: stateless, any replica.
  const modern = new ModernMcp(deps, (e) => app.log.debug({ err: e }, 'MCP request refused or failed in the SDK'));
  const listens = new ListenStreams(LIMITS.perCaller);
  passthrough.modern = modern.notify;

  const onReload = (r: ReloadResult) => {
    if (r.added.length + r.changed.length + r.removed.length === 0) return;
    modern.toolsChanged();
    // Every replica sees the same tools.d change: each session hears it once (in memory: from this replica).
    sessions.forEachOnce(`tools:${catalogDigest(gw)}`, (s) => void s.server.sendToolListChanged().catch(() => undefined));
    legacy.forEach((server) => void server.sendToolListChanged().catch(() => undefined));
  };
  gw.on('reload', onReload);
  const close = async () => {
    gw.off('reload', onReload);
    toolSearch?.close();
    passthrough.close();
    await Promise.all([sessions.closeAll(), legacy.closeAll(), modern.close()]);
    await store?.close();
  };

  /** An answer of the gateway's own that refuses a message: counted, then sent. */
  const refuse = (reply: FastifyReply, reason: ProtocolErrorReason, status: number, code: number, message: string) => {
    gw.metrics.mcpProtocolError(reason);
    return reply.send(jsonRpcError(status, code, message));
  };

  /** A JSON-RPC error answer to the request itself (its id kept), HTTP 200 as the SDK answers a request it refuses. */
  const refuseRequest = (reply: FastifyReply, message: unknown, reason: ProtocolErrorReason, code: number, text: string) => {
    gw.metrics.mcpProtocolError(reason);
    const id = (message as { id?: unknown } | undefined)?.id ?? null;
    return reply.status(200).type('application/json').send({ jsonrpc: '2.0', id, error: { code, message: text } });
  };

  /** An initialize past mcp.sessions.max: 503, Retry-After when the idlest session times out (sessions.ts, `refuses`). */
  const tooManySessions = (reply: FastifyReply) => {
    reply.header('retry-after', String(sessions.retryAfterSeconds()));
    return refuse(reply, 'too_many_sessions', 503, -32000, 'Service Unavailable: too many MCP sessions are open; retry later');
  };

  /** Sends the SDK's answer; a refusal (4xx with a JSON-RPC error) is counted by its reason. */
  const answer = async (reply: FastifyReply, req: FastifyRequest, response: Response) => {
    const reason = await refusalReason(response);
    if (reason) gw.metrics.mcpProtocolError(reason);
    const stream = req.method === 'GET' && response.status === 200 ? response.body : null;
    return reply.send(stream ? new Response(withOpeningComment(stream), response) : response);
  };

  /** A 2025-era message: sessions, as before. */
  const handleLegacy = async (req: FastifyRequest, reply: FastifyReply, parsed: Parsed | undefined) => {
    const id = req.headers['mcp-session-id'];
    let response: Response;
    if (typeof id === 'string') {
      const session = await sessions.resolve(id, req.caller);
      if (!session) return refuse(reply, 'session_not_found', 404, -32001, 'Session not found');
      const level = store && parsed ? levelSetBy(parsed.value) : undefined;
      if (level !== undefined) await sessions.noteLevel(session, level);
      const subscribed = store && parsed ? subscriptionsChangedBy(parsed.value) : undefined;
      if (subscribed) await sessions.noteSubscriptions(session, subscribed);
      if (parsed && fastCalls) {
        const call = asFastCall(req, parsed.value);
        // find_tools goes through the SDK: its list_changed then rides on the call's own stream, before the result.
        if (call && !toolSearch?.handles(req.caller, call.name) && !mayAskClient(gw, session.server, call.name)) return answerFastCall(deps, call, req, reply, { session });
        cancelFastCall(session, parsed.value);
      }
      session.streams++;
      reply.raw.once('close', () => {
        session.streams--;
        session.lastSeen = Date.now();
      });
      if (store && req.method === 'GET') {
        const refused = refuseSharedGet(req);
        response = refused ?? (await sharedStream(store, session, header(req.headers, 'last-event-id') ?? null, () => void sessions.drop(session.id)));
      } else response = await handOver(session.transport, req, parsed);
      // The standalone GET stream lives no longer than the token that opened it (the session does: it is the caller's).
      if (req.method === 'GET' && response.status === 200) endAtExpiry(req.caller, reply.raw, () => reply.raw.destroy());
    } else if (req.method === 'POST') {
      // Not an initialize (a JSON body the SDK would only refuse): refused without building a session for it.
      if (parsed && !opensSession(parsed.value)) return refuse(reply, 'session_required', 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      if (sessions.refuses(req.caller)) return tooManySessions(reply);
      const { transport, settle } = await sessions.open(req.caller, initParamsOf(parsed?.value));
      let opened: Awaited<ReturnType<typeof settle>> = 'ok';
      try {
        response = await handOver(transport, req, parsed);
      } finally {
        opened = await settle(); // also when the request was refused before the SDK saw it
      }
      if (opened === 'full') {
        await response.body?.cancel().catch(() => undefined);
        return tooManySessions(reply);
      }
    } else {
      return refuse(reply, 'session_required', 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    }
    return answer(reply, req, response);
  };

  /** A 2026-07-28 message: no session; the SDK's strict handler validates the envelope and answers. */
  const handleModern = async (req: FastifyRequest, reply: FastifyReply, parsed: Parsed | undefined, webRequest: () => Request, end: () => void) => {
    if (req.headers['mcp-session-id'] !== undefined) {
      return refuse(reply, 'session_on_modern', 400, -32600, `Bad Request: protocol revision ${MODERN_REVISION} has no sessions; send no Mcp-Session-Id header`);
    }
    // A gated call here answers with an input request, no stream needed: the JSON path serves every plain call.
    const call = parsed ? asModernFastCall(req, parsed.value) : undefined;
    if (call) {
      const caps = envelopeCapabilities(parsed?.value);
      const gate: ModernGate = { deps, caller: req.caller, requestId: req.id, canAsk: declaresForm(caps), capabilities: () => caps as ClientCapabilities | undefined };
      return answerFastCall(deps, call, req, reply, { modern: gate, encode: modernResult });
    }
    const released = isListen(parsed?.value) ? await passthrough.listen(req.caller, parsed?.value) : undefined;
    if (released && 'refused' in released) return refuseRequest(reply, parsed?.value, 'too_many_subscriptions', -32600, released.refused);
    if (released) reply.raw.once('close', released);
    const response = await modern.fetch(webRequest(), req.caller, parsed?.value);
    if (isListen(parsed?.value) && response.status === 200 && response.headers.get('content-type')?.startsWith('text/event-stream')) {
      // An open listen stream: counted against its key until it closes, the oldest ended past the limit.
      const closed = listens.add(sessionKey(req.caller), end); // per person: one cannot end another's through a shared client id
      reply.raw.once('close', closed);
      endAtExpiry(req.caller, reply.raw, end);
    }
    return answer(reply, req, response);
  };

  const handle = async (req: FastifyRequest, reply: FastifyReply) => {
    const parsed = parseBody(req);
    if (parsed && tooDeep(parsed.value)) return refuse(reply, 'too_deep', 400, -32600, `Invalid Request: the message nests deeper than ${MAX_NESTING} levels`);
    let web: Request | undefined;
    let gone: AbortController | undefined;
    // The SDK's per-request handler ends an exchange (a call, a listen stream) when this aborts: the client went away.
    const webRequest = () => (web ??= toWebRequest(req, parsed === undefined, (gone = clientGone(reply)).signal));
    if (await isLegacy(req, parsed, webRequest)) return handleLegacy(req, reply, parsed);
    return handleModern(req, reply, parsed, webRequest, () => gone?.abort());
  };

  return {
    mcp: handle,
    sseOpen: (req, reply) => legacy.open(req, reply),
    sseMessage: (req, reply) => legacy.message(req, reply, fastCalls),
    close,
  };
}
