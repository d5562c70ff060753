import { frameworkErrorOptions } from './plugins/framework-errors.js';

/**
 * The HTTP server's own settings, as Fastify constructor options: its timeouts (config
 * `server.*TimeoutMs`) and the handlers that answer framework and parser errors in the one shape.
 *
 * Without the timeouts Fastify keeps an idle keep-alive connection for 72 s (its default, sized
 * for load balancers that idle for 60 s), waits for a request body forever (requestTimeout 0) and
 * lets a client take Node's 60 s over its headers, checked only every 30 s: a few hundred slow or
 * idle sockets hold the server's descriptors. None of them cuts a response in progress: the
 * keep-alive timeout starts when a response has ended, and the request and headers timeouts end
 * once the request has been received, so SSE streams (`/sse`, `GET /mcp`,
 * `/v1/calls/{id}/events`) and long calls run on.
 */
export interface ServerSettings {
  keepAliveTimeoutMs: number;
  requestTimeoutMs: number;
  headersTimeoutMs: number;
}

/** How often Node looks for requests over their time: a quarter of the shortest, within 25 ms to 1 s. */
function checkingInterval(shortestMs: number): number {
  return Math.min(1000, Math.max(25, Math.floor(shortestMs / 4)));
}

export function serverOptions(s: ServerSettings) {
  // Node refuses a headers timeout above the request timeout: the whole request bounds its headers.
  const headersTimeout = Math.min(s.headersTimeoutMs, s.requestTimeoutMs);
  return {
    ...frameworkErrorOptions(),
    keepAliveTimeout: s.keepAliveTimeoutMs,
    requestTimeout: s.requestTimeoutMs,
    http: {
      headersTimeout,
      requestTimeout: s.requestTimeoutMs,
      connectionsCheckingInterval: checkingInterval(headersTimeout),
      // Node answers a Host-less HTTP/1.1 request with a bare 400 of its own; registerRequestChecks does, in the one shape.
      requireHostHeader: false,
    },
  };
}
