import type { FastifyInstance } from 'fastify';
import type { Gateway } from '../gateway.js';

/** Liveness and readiness: no key needed. */
export async function healthRoutes(app: FastifyInstance, opts: { gw: Gateway }): Promise<void> {
  const { gw } = opts;
  app.get('/healthz', { schema: { summary: 'The process is alive', tags: ['operations'] } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { summary: 'Ready to serve calls, with the state of each dependency', tags: ['operations'] } }, async (_req, reply) => {
    // Each dependency reports itself (gw.readiness); a draining gateway is not ready either.
    const r = gw.readiness.report();
    const ready = r.ready && !gw.draining;
    const checks = { ...r.checks, draining: gw.draining };
    return reply
      .code(ready ? 200 : 503)
      .send({ status: ready ? 'ready' : 'not_ready', generation: gw.registry.generation, tools: gw.registry.size, checks, missing: r.missing });
  });
}
