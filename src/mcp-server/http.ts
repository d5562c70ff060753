import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../errors.js';

/** Headers that describe one hop of the Fastify connection, not the MCP message. */
const HOP = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'upgrade', 'expect', 'te', 'trailer']);

/**
 * The Fastify request as a web Request for the SDK's web-standard transport (its answer, a
 * Response, Fastify sends natively, hooks included). The body arrives unparsed, so the SDK
 * answers malformed JSON itself, in JSON-RPC terms. `x-request-id` carries the gateway's id to the
 * tool handlers (audit correlation).
 */
export function toWebRequest(req: FastifyRequest, withBody = true, signal?: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || HOP.has(name)) continue;
    for (const v of Array.isArray(value) ? value : [value]) {
      try {
        headers.append(name, v);
      } catch {
        // A value a web Headers refuses (NUL, characters beyond Latin-1) is the client's mistake, not a fault here.
        throw new GatewayError('BAD_REQUEST', `the ${name} header has a value that is not a valid HTTP header value`);
      }
    }
  }
  headers.set('x-request-id', req.id);
  const body = withBody && req.method === 'POST' && typeof req.body === 'string' ? req.body : undefined;
  return new Request(`http://localhost${req.url}`, { method: req.method, headers, ...(body !== undefined ? { body } : {}), ...(signal ? { signal } : {}) });
}

const OPENING = new TextEncoder().encode(': stream open\n\n');

/**
 * An SSE body that starts with a comment: the headers go out at once, so a client (and any proxy
 * between) sees the GET stream established instead of waiting for the first event.
 */
export function withOpeningComment(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let opened = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!opened) {
        opened = true;
        controller.enqueue(OPENING);
        return;
      }
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

export function jsonRpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}
