import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors.js';
import { toGatewayError } from './errors.js';

/**
 * The errors that never reach a route's error handler, in the one SPEC §3 shape too: Fastify's
 * router refusing a URL (`frameworkErrors`), Node's HTTP parser refusing the bytes or timing a
 * client out (`clientError`, before any request exists), requests that arrive while the server
 * is closing (Fastify's own 503 otherwise), and Node's bare answers to a request without `Host`
 * or with an unknown `Expect`, and a CONNECT (Node cuts it with no answer).
 */

/**
 * The longest path parameter the router takes. Fastify's default (100) is below the longest tool
 * name (128) and the name schema (256): the route schemas judge lengths, this only bounds the router.
 */
export const MAX_PARAM_LENGTH = 1024;

/** The catalogue error for one of the router's own refusals. */
export function frameworkError(err: FastifyError): GatewayError {
  switch (err.code) {
    case 'FST_ERR_BAD_URL':
      return new GatewayError('BAD_REQUEST', 'the URL path has an invalid percent-encoding', {
        modelMessage: 'The URL is malformed. Percent-encode the tool name or id correctly and send it again.',
      });
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new GatewayError('URI_TOO_LONG', `a path segment is longer than ${MAX_PARAM_LENGTH} characters`);
    default:
      return toGatewayError(err); // FST_ERR_ASYNC_CONSTRAINT: no route has one; INTERNAL if it ever comes
  }
}

function onFrameworkError(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  const g = frameworkError(err);
  if (g.code === 'INTERNAL') req.log.error({ err }, 'router error');
  // No onRequest hook ran for this request: the id header is set here.
  void reply.code(g.status).header('x-request-id', req.id).send(g.toBody());
}

/** Node's parser and timeout errors, by the code Node gives them (its own default answers: 400, 408, 413, 431). */
export function clientError(code: string | undefined): GatewayError {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new GatewayError('REQUEST_TIMEOUT', 'the request headers or body did not arrive in time');
    case 'HPE_HEADER_OVERFLOW':
      return new GatewayError('HEADERS_TOO_LARGE', 'the request line and headers are larger than the limit');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new GatewayError('PAYLOAD_TOO_LARGE', 'the chunk extensions are larger than the limit');
    default:
      return new GatewayError('BAD_REQUEST', 'malformed HTTP request', { modelMessage: 'The HTTP request was malformed and could not be read. Send a well-formed request.' });
  }
}

/** The raw response written to a socket that has no request object (nor any reply) to answer through. */
export function rawErrorResponse(g: GatewayError): string {
  const body = JSON.stringify(g.toBody());
  return [
    `HTTP/1.1 ${g.status} ${STATUS_CODES[g.status] ?? 'Error'}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${randomUUID()}`,
    'connection: close',
    '',
    body,
  ].join('\r\n');
}

/** The response of an earlier request on this socket still being produced, if any (Node's own field). */
type WithResponse = { _httpMessage?: ServerResponse | null };

/**
 * The parser stops at the first malformed request of a connection. A whole request before it
 * (pipelined, or sent while a call runs) may still be answering: its response goes out first, then the error,
 * then the connection closes. Written at once (Node's and Fastify's way) the error would be read
 * as the earlier request's answer and that response lost, though its call ran.
 */
const answering = new WeakSet<Socket>();

function onClientError(err: Error & { code?: string }, socket: Socket): void {
  // The parser reports its error again for every later chunk: the first report is answered.
  if (err.code === 'ECONNRESET' || socket.destroyed || answering.has(socket)) return;
  answering.add(socket);
  const answer = () => {
    if (socket.destroyed) return;
    if (socket.writable) socket.write(rawErrorResponse(clientError(err.code)));
    socket.destroy(err);
  };
  const pending = (socket as Socket & WithResponse)._httpMessage;
  if (!pending || pending.writableFinished) return answer();
  if (!pending.req.complete) {
    // The malformed part is this request's own body: it is answered now, unless its answer has begun.
    if (pending.headersSent) socket.destroy(err);
    else answer();
    return;
  }
  let once = false;
  const after = () => {
    if (once) return;
    once = true;
    setImmediate(answer); // after Node's own handling of the finished response
  };
  pending.once('finish', after);
  pending.once('close', after);
}

/** A CONNECT (Node's 'connect' event, no request object): the gateway is no proxy. */
function onConnect(_req: IncomingMessage, socket: Socket): void {
  socket.on('error', () => socket.destroy());
  socket.end(rawErrorResponse(new GatewayError('BAD_REQUEST', 'CONNECT is not supported: the gateway is not a proxy', {
    modelMessage: 'The gateway does not tunnel connections. Send an ordinary HTTP request instead.',
  })));
}

/** Fastify's options for the above (spread into its constructor's options). */
export function frameworkErrorOptions() {
  return {
    frameworkErrors: onFrameworkError,
    clientErrorHandler: onClientError,
    return503OnClosing: false, // registerRequestChecks answers those, in the one shape
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
  };
}

/** RFC 9112 §3.2: `uri-host [ ":" port ]`, an IP literal in brackets or a reg-name (no userinfo, path, query or fragment). */
const HOST_VALUE = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]+)(?::\d*)?$/;

function hostLines(raw: string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]?.length === 4 && raw[i]?.toLowerCase() === 'host') n++;
  return n;
}

/**
 * Checks Node would otherwise answer in its own way, on every request (one synchronous hook):
 * - a request read while the server closes (on a connection still busy when it stopped listening)
 *   gets 503 UNAVAILABLE and `Connection: close`, as Fastify's own `return503OnClosing` does;
 * - an HTTP/1.1 request without `Host` is 400 (RFC 9112 §3.2; Node's own check is off, see server-options.ts),
 *   and so is one with two Host lines or a Host that is not `host[:port]` (the same section).
 * An `Expect` other than `100-continue` is ignored rather than answered with Node's bare 417.
 */
export function registerRequestChecks(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (req, reply, done) => {
    if (closing) {
      reply.header('connection', 'close');
      return done(new GatewayError('UNAVAILABLE', 'the gateway is shutting down', { retryAfterSeconds: 1, modelMessage: 'The gateway is restarting. Try the same call again in a moment.' }));
    }
    const host = req.headers.host;
    if (host === undefined && req.raw.httpVersion === '1.1') {
      reply.header('connection', 'close'); // as Node's own check did
      return done(new GatewayError('BAD_REQUEST', 'an HTTP/1.1 request needs a Host header'));
    }
    if (host !== undefined && (!HOST_VALUE.test(host) || hostLines(req.raw.rawHeaders) > 1)) {
      // Node keeps the first of two Host lines and takes any text: a proxy before it may read another.
      reply.header('connection', 'close');
      return done(new GatewayError('BAD_REQUEST', 'the request needs exactly one Host header of the form host[:port]'));
    }
    done();
  });
  app.server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => app.server.emit('request', req, res));
  app.server.on('connect', onConnect);
}
