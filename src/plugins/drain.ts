import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import type { Gateway } from '../gateway.js';
import { GatewayError } from '../errors.js';
import type { InFlight } from '../util/in-flight.js';
import { whenClosed, type ResponseCloseListener } from '../util/response-close.js';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Requests that start work: calls, batches, approvals, routing queries, MCP messages. */
function startsWork(req: FastifyRequest): boolean {
  if (READS.has(req.method)) return false;
  // The raw URL, not req.routeOptions (a getter building an object per access); an unknown
  // /v1/ path counts too, which only matters while draining.
  const url = req.raw.url ?? '';
  return url.startsWith('/v1/') || url === '/mcp' || url.startsWith('/mcp?') || url.startsWith('/messages');
}

/**
 * Graceful shutdown, the request side: counts work in flight so server.ts can wait for it, and
 * once `gw.draining` is set refuses new work with 503 UNAVAILABLE (a load balancer or client
 * retries elsewhere) while the calls already running finish.
 *
 * A request counts until its handler is done (onSend: the audit record is written by then), not
 * until its socket closes: a client that goes away must not let the audit sink close under a
 * call still running. One that never reached its handler ends with its socket.
 */
export function registerDrain(app: FastifyInstance, gw: Gateway): void {
  app.decorateRequest('work', null);
  // Synchronous hooks (done callbacks): this runs on every request.
  app.addHook('onRequest', (req, reply, done) => {
    if (!startsWork(req)) return done();
    if (gw.draining) {
      return done(
        new GatewayError('UNAVAILABLE', 'the gateway is shutting down', {
          retryAfterSeconds: 1,
          modelMessage: 'The gateway is restarting. Try the same call again in a moment.',
        }),
      );
    }
    req.work = new Work(gw.inFlight, reply.raw);
    done();
  });
  app.addHook('preHandler', (req, _reply, done) => {
    if (req.work) req.work.handling = true;
    done();
  });
  app.addHook('onSend', (req, _reply, payload, done) => {
    req.work?.leave();
    done(null, payload);
  });
}

/** One request that starts work: counted until its handler is done, or its response closes before that. */
class Work implements ResponseCloseListener {
  handling = false;
  private left = false;

  constructor(
    private readonly inFlight: InFlight,
    res: ServerResponse,
  ) {
    inFlight.begin();
    whenClosed(res, this);
  }

  responseClosed(): void {
    if (!this.handling) this.leave();
  }

  /** Ends the count (once; later calls do nothing). */
  leave(): void {
    if (this.left) return;
    this.left = true;
    this.inFlight.end();
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the drain for requests that start work. */
    work: Work | null;
  }
}
