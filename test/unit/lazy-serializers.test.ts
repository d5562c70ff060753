import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { lazySerializers } from '../../src/plugins/lazy-serializers.js';

// The gateway's response serializers are compiled on each one's first response (src/plugins/lazy-serializers.ts).
const apps: ReturnType<typeof Fastify>[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

function app() {
  const a = Fastify({ schemaController: { compilersFactory: { buildSerializer: lazySerializers() } } });
  apps.push(a);
  a.addSchema({ $id: 'Item', type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } }, required: ['id'] });
  return a;
}

describe('lazy response serializers', () => {
  it('serialize as fast-json-stringify does: shared schemas by $ref, unknown keys dropped, types coerced, per status', async () => {
    const a = app();
    a.get('/item', { schema: { response: { 200: { $ref: 'Item#' }, 404: { type: 'object', properties: { error: { type: 'string' } } } } } }, async (req, reply) => {
      if ((req.query as { missing?: string }).missing) return reply.code(404).send({ error: 'no such item', stack: 'secret' });
      return { id: '7', name: 'seven', internal: 'dropped' };
    });
    for (let i = 0; i < 2; i++) {
      const ok = await a.inject({ method: 'GET', url: '/item' });
      expect(ok.statusCode).toBe(200);
      expect(ok.body).toBe('{"id":7,"name":"seven"}');
    }
    const missing = await a.inject({ method: 'GET', url: '/item?missing=1' });
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toBe('{"error":"no such item"}');
  });

  it('compile at the first response, not at start: a schema that cannot compile fails that response only', async () => {
    const a = app();
    a.get('/bad', { schema: { response: { 200: { $ref: 'Nowhere#' } } } }, async () => ({ id: 1 }));
    a.get('/good', { schema: { response: { 200: { $ref: 'Item#' } } } }, async () => ({ id: 1, extra: true }));
    await a.ready(); // the eager default would throw here
    expect((await a.inject({ method: 'GET', url: '/good' })).body).toBe('{"id":1}');
    expect((await a.inject({ method: 'GET', url: '/bad' })).statusCode).toBe(500);
    expect((await a.inject({ method: 'GET', url: '/good' })).statusCode).toBe(200);
  });
});
