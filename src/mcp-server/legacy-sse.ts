import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Server } from '@modelcontextprotocol/server';
import { endAtExpiry } from '../auth/expiry.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import type { Caller } from '../auth/caller.js';
import { mayAskClient } from './relay.js';
import { GatewayError } from '../errors.js';
import { newId } from '../util/ids.js';
import { CallSlot } from '../pipeline/client-gone.js';
import { cancelledRequestId, clientCancelled, plainToolCall } from './fast-call.js';
import { header, runMcpCall, type McpServerDeps } from './server.js';
import { toWebRequest } from './http.js';
import type { ProtocolErrorReason } from './protocol-errors.js';
import { sessionKey } from '../auth/caller.js';

import { MESSAGES_PATH } from './paths.js';
const KEEPALIVE_MS = 25_000;
/**
 * Answers written to a stream and not yet taken by its client (held in the gateway's memory past
 * the socket's buffers). Beyond this the stream is ended as if the client had closed it: its
 * calls are cancelled and the client must open a new one. Without it, a client posting calls and
 * never reading its stream made the gateway hold every result.
 */
export const MAX_UNREAD_BYTES = 16 * 1024 * 1024;

interface SseSession {
  readonly transport: SSEServerTransport;
  readonly server: Server;
  readonly callerId: string;
  readonly opened: number;
  /** This session's calls answered on the stream, by JSON-RPC id (a cancel or the stream's end stops them). */
  readonly calls: Map<string | number, CallSlot>;
}

/**
 * toolgate as an MCP server over the legacy SSE transport, for clients that do not speak
 * Streamable HTTP yet: `GET /sse` opens the session's stream (its first event names the URL to
 * post to), `POST /messages?sessionId=…` carries the client's messages, answered 202 with the
 * replies on the stream. Same origin check, key and per-caller binding as `/mcp`. A plain
 * `tools/call` goes straight to the pipeline (202 at once, the result on the stream when it is
 * ready); everything else through the SDK's Server, as on `/mcp`.
 */
export class LegacySse {
  private readonly sessions = new Map<string, SseSession>();

  constructor(
    private readonly deps: McpServerDeps,
    private readonly build: (caller: Caller) => Server,
    private readonly perCaller: number,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  forEach(fn: (server: Server) => void): void {
    for (const s of this.sessions.values()) fn(s.server);
  }

  /** Ends every stream (shutdown). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((s) => s.server.close().catch(() => undefined)));
    this.sessions.clear();
  }

  /** GET /sse: opens a session stream. */
  async open(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const caller = req.caller;
    const transport = new SSEServerTransport(MESSAGES_PATH, reply.raw);
    const server = this.build(caller);
    const session: SseSession = { transport, server, callerId: sessionKey(caller), opened: Date.now(), calls: new Map() };
    this.makeRoom(sessionKey(caller));
    this.sessions.set(transport.sessionId, session);
    reply.hijack();
    reply.raw.setHeader('x-accel-buffering', 'no');
    const keepalive = setInterval(() => reply.raw.write(': keepalive\n\n'), KEEPALIVE_MS);
    keepalive.unref();
    reply.raw.on('close', () => {
      clearInterval(keepalive);
      this.sessions.delete(transport.sessionId);
      for (const slot of session.calls.values()) slot.cancel(new GatewayError('UNAVAILABLE', 'the MCP client closed its stream; the call was cancelled'));
      void server.close().catch(() => undefined);
    });
    endAtExpiry(caller, reply.raw, () => reply.raw.destroy()); // no longer than the token that opened it (destroyed: no write after an end)
    const send = transport.send.bind(transport);
    transport.send = async (message) => {
      await send(message);
      if (reply.raw.writableLength > MAX_UNREAD_BYTES) reply.raw.destroy();
    };
    await server.connect(transport); // writes the head and the `endpoint` event
  }

  /** POST /messages: one client message for the session named by `sessionId`. */
  async message(req: FastifyRequest, reply: FastifyReply, fastCalls: boolean): Promise<unknown> {
    const id = (req.query as Record<string, unknown> | undefined)?.['sessionId'];
    const session = typeof id === 'string' ? this.sessions.get(id) : undefined;
    // Another key's session is not found either: a key learns nothing about others' sessions.
    const refused = (reason: ProtocolErrorReason) => this.deps.gw.metrics.mcpProtocolError(reason);
    if (!session || session.callerId !== sessionKey(req.caller)) {
      refused('session_not_found');
      throw new GatewayError('NOT_FOUND', 'no SSE session with that sessionId', { modelMessage: 'The MCP session is gone. Open a new one with GET /sse.' });
    }
    // As the SDK's own SSE transport: JSON only, not text/plain or a form (a cross-site page's preflight-free bodies).
    const type = req.headers['content-type']?.split(';', 1)[0]?.trim().toLowerCase();
    if (type !== 'application/json') {
      refused('media_type');
      throw new GatewayError('BAD_REQUEST', 'the request body must be JSON (Content-Type: application/json)');
    }
    let msg: unknown;
    try {
      msg = typeof req.body === 'string' ? JSON.parse(req.body) : undefined;
    } catch {
      msg = undefined;
    }
    if (msg === undefined) {
      refused('parse_error');
      throw new GatewayError('BAD_REQUEST', 'the body must be one JSON-RPC message (JSON)');
    }
    const call = fastCalls ? plainToolCall(msg) : undefined;
    if (call && !mayAskClient(this.deps.gw, session.server, call.name)) {
      void this.answerOnStream(session, call, req);
      return reply.code(202).type('text/plain').send('Accepted');
    }
    const cancelled = cancelledRequestId(msg);
    if (cancelled !== undefined) session.calls.get(cancelled)?.cancel(clientCancelled());
    try {
      // The 1.x transport hands `extra` to the v2 Server as it is: `request` is what v2 handlers read headers from.
      const extra = { requestInfo: { headers: req.headers }, request: toWebRequest(req, false) };
      await session.transport.handleMessage(msg, extra);
    } catch {
      refused('invalid_request');
      throw new GatewayError('BAD_REQUEST', 'the body is not a JSON-RPC message');
    }
    return reply.code(202).type('text/plain').send('Accepted');
  }

  /** A tools/call straight through the pipeline; its result (failures included) goes to the stream. */
  private async answerOnStream(session: SseSession, call: { id: string | number; name: string; args: Record<string, unknown> }, req: FastifyRequest): Promise<void> {
    const slot = new CallSlot();
    session.calls.set(call.id, slot);
    const notice = () => void session.server.sendToolListChanged().catch(() => undefined);
    try {
      const result = await runMcpCall(this.deps, req.caller, call.name, call.args, {
        requestId: header(req.headers, 'x-request-id') ?? newId('r'),
        headers: req.headers,
        sessionId: session.transport.sessionId,
        onClientGone: slot,
        listChanged: { now: notice, later: notice }, // one stream carries everything
      });
      await session.transport.send({ jsonrpc: '2.0', id: call.id, result });
    } catch {
      // The stream closed meanwhile: nobody is left to answer (the call itself is audited).
    } finally {
      slot.release();
      if (session.calls.get(call.id) === slot) session.calls.delete(call.id);
    }
  }

  /** One caller holds at most `perCaller` streams: opening one more ends its oldest. */
  private makeRoom(callerId: string): void {
    const mine = [...this.sessions.values()].filter((s) => s.callerId === callerId);
    if (mine.length < this.perCaller) return;
    const oldest = mine.reduce((a, b) => (b.opened < a.opened ? b : a));
    void oldest.server.close().catch(() => undefined);
  }
}
