import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Gateway } from '../gateway.js';
import { GatewayError } from '../errors.js';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Requests that start work: calls, batches, approvals, routing queries, MCP messages. */
function startsWork(req: FastifyRequest): boolean {
  const route = req.routeOptions.url;
  if (route === undefined || READS.has(req.method)) return false;
  return route.startsWith('/v1/') || route === '/mcp';
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
  const running = new WeakMap<FastifyRequest, { leave: () => void; handling: boolean }>();
  app.addHook('onRequest', async (req, reply) => {
    if (!startsWork(req)) return;
    if (gw.draining) {
      throw new GatewayError('UNAVAILABLE', 'the gateway is shutting down', {
        retryAfterSeconds: 1,
        modelMessage: 'The gateway is restarting. Try the same call again in a moment.',
      });
    }
    const work = { leave: gw.inFlight.enter(), handling: false };
    running.set(req, work);
    reply.raw.once('close', () => {
      if (!work.handling) work.leave();
    });
  });
  app.addHook('preHandler', async (req) => {
    const work = running.get(req);
    if (work) work.handling = true;
  });
  app.addHook('onSend', async (req, _reply, payload) => {
    running.get(req)?.leave();
    return payload;
  });
}
