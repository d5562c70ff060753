import type { FastifyInstance } from 'fastify';
import type { Gateway } from '../gateway.js';
import { requireCaller } from './auth.js';
import { requireScopes } from './scopes.js';

/**
 * GET /metrics: the Prometheus text exposition of the gateway's own registry. No key needed,
 * unless the config says `metrics: { requireKey: true }`: then the admin role.
 */
export async function metricsRoutes(app: FastifyInstance, opts: { gw: Gateway }): Promise<void> {
  const { gw } = opts;
  const requireKey = gw.config.metrics.requireKey;
  if (requireKey) {
    requireCaller(app, gw.auth);
    requireScopes(app, gw.resource);
  }
  app.get(
    '/metrics',
    {
      config: requireKey ? { role: 'admin' } : {},
      schema: {
        summary: 'Prometheus metrics (text exposition format)',
        tags: ['operations'],
      },
    },
    async (_req, reply) => {
      const { contentType, text } = await gw.metrics.exposition();
      return reply.type(contentType).send(text);
    },
  );
}
