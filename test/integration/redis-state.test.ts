import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { MemoryStore } from '../../src/state/memory.js';
import { RedisStore } from '../../src/state/redis.js';
import type { StateStore } from '../../src/state/types.js';
import { echoTool, startGateway, type TestGateway } from '../helpers/app.js';
import { TestRedis } from '../helpers/redis.js';
import { Upstream, json } from '../helpers/upstream.js';

const KEYS = { agent: 'k-agent-000001', ops: 'k-ops-0000003', ops2: 'k-ops-0000004' };

/** Polls an async condition (bounded: about 5 s). */
async function eventually(cond: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${what} not reached`);
}

const errorCode = (r: LightMyRequestResponse) => (r.json() as { error?: { code?: string } }).error?.code;

/** The same assertions against both stores: what the pipeline and confirmations rely on. */
function contract(name: string, make: () => Promise<StateStore>) {
  describe(`StateStore contract: ${name}`, () => {
    let store: StateStore;
    const k = (s: string) => `toolgate:test:${name}:${s}:${Math.random().toString(36).slice(2)}`;
    beforeAll(async () => {
      store = await make();
    });
    afterAll(async () => store.close());

    it('setIfAbsent stores once, and the value reads back with a TTL', async () => {
      const key = k('nx');
      expect(await store.setIfAbsent(key, 'first', 60_000)).toBe(true);
      expect(await store.setIfAbsent(key, 'second', 60_000)).toBe(false);
      expect(await store.get(key)).toBe('first');
      const ttl = await store.ttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60_000);
    });

    it('set overwrites, delete removes, absent keys read as undefined', async () => {
      const key = k('kv');
      await store.set(key, 'a', 60_000);
      await store.set(key, 'b', 60_000);
      expect(await store.get(key)).toBe('b');
      await store.delete(key);
      expect(await store.get(key)).toBeUndefined();
      expect(await store.ttl(key)).toBeUndefined();
      expect(await store.setIfAbsent(key, 'c', 60_000)).toBe(true);
    });

    it('increment counts within one window, concurrent increments are all counted', async () => {
      const key = k('ctr');
      const counts = await Promise.all(Array.from({ length: 20 }, () => store.increment(key, 60_000)));
      expect(counts.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(await store.ttl(key)).toBeLessThanOrEqual(60_000);
    });

    it('a window ends: the counter starts again', async () => {
      const key = k('short');
      expect(await store.increment(key, 1)).toBe(1);
      await new Promise((r) => setTimeout(r, 20));
      expect(await store.increment(key, 60_000)).toBe(1);
    });

    it('sets add, remove and list members', async () => {
      const key = k('set');
      await store.addToSet(key, 'x');
      await store.addToSet(key, 'y');
      await store.addToSet(key, 'x');
      await store.removeFromSet(key, 'y');
      expect(await store.members(key)).toEqual(['x']);
      expect(await store.members(k('none'))).toEqual([]);
    });
  });
}

let redis: TestRedis;
beforeAll(async () => {
  redis = await TestRedis.start();
});
afterAll(async () => redis?.stop('SIGTERM'));

contract('memory', async () => new MemoryStore());
contract('redis', async () => new RedisStore(redis.url));

describe('two replicas on one Redis', () => {
  let up: Upstream;
  let a: TestGateway;
  let b: TestGateway;
  const charges = () => up.seen.filter((s) => s.url === '/charge').length;
  const as = (who: keyof typeof KEYS) => ({ authorization: `Bearer ${KEYS[who]}` });
  const decide = (gw: TestGateway, id: string, who: keyof typeof KEYS) =>
    gw.app.inject({ method: 'POST', url: `/v1/confirmations/${id}/approve`, headers: as(who), payload: {} });
  const charge = (gw: TestGateway, amount: number, headers: Record<string, string> = {}) => gw.call('pay.charge', { amount }, { key: KEYS.agent, headers });
  const readyz = async (gw: TestGateway) => {
    const r = await gw.app.inject({ method: 'GET', url: '/readyz' });
    return { status: r.statusCode, redis: (r.json() as { checks: Record<string, unknown> }).checks['redis'] };
  };

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((_req, res, body) => json(res, 200, { charged: JSON.parse(body) as unknown }));
    const replica = () =>
      startGateway({
        config: {
          state: { redis: redis.url },
          confirmations: { ttlSeconds: 60, fourEyes: true },
          auth: {
            keys: [
              { id: 'agent-1', key: KEYS.agent, roles: ['agent'] },
              { id: 'ops', key: KEYS.ops, roles: ['approver'] },
              { id: 'ops-2', key: KEYS.ops2, roles: ['approver'] },
            ],
          },
        },
        tools: {
          'charge.yaml': {
            name: 'pay.charge',
            description: 'Charges a card',
            sideEffect: 'write',
            confirm: { when: [{ arg: 'amount', gt: 100 }] },
            inputSchema: { type: 'object', required: ['amount'], properties: { amount: { type: 'number' } } },
            backends: [{ id: 'api', http: { method: 'POST', url: `${up.url}/charge`, body: '{{arguments}}' } }],
          },
          'echo.yaml': echoTool('util.echo'),
        },
      });
    [a, b] = await Promise.all([replica(), replica()]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await up?.close();
  });

  it('a confirmation opened on A is listed and approved on B, and runs once', async () => {
    const before = charges();
    const pending = await charge(a, 500);
    expect(pending.statusCode).toBe(202);
    const id = (pending.json() as { confirmation: { id: string } }).confirmation.id;
    const listed = await b.app.inject({ method: 'GET', url: '/v1/confirmations', headers: as('ops') });
    expect((listed.json() as { confirmations: { id: string }[] }).confirmations.map((c) => c.id)).toContain(id);
    const approved = await decide(b, id, 'ops');
    expect(approved.statusCode).toBe(200);
    expect((await decide(a, id, 'ops2')).statusCode).toBe(409);
    expect(charges()).toBe(before + 1);
  });

  it('concurrent approvals on A and B run the call once', async () => {
    for (let round = 0; round < 5; round++) {
      const before = charges();
      const id = ((await charge(a, 200 + round)).json() as { confirmation: { id: string } }).confirmation.id;
      const answers = await Promise.all([decide(a, id, 'ops'), decide(b, id, 'ops2')]);
      expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 409]);
      expect(charges()).toBe(before + 1);
    }
  });

  it('an Idempotency-Key used on A is replayed on B without running again', async () => {
    const before = charges();
    const key = { 'idempotency-key': `idem-${Date.now()}` };
    const first = await charge(a, 7, key);
    expect(first.statusCode).toBe(200);
    const again = await charge(b, 7, key);
    expect(again.statusCode).toBe(200);
    expect((again.json() as { callId: string }).callId).toBe((first.json() as { callId: string }).callId);
    expect(charges()).toBe(before + 1);
    expect((await charge(b, 8, key)).statusCode).toBe(409);
  });

  it('Redis down: gated, approval and idempotent calls fail closed, plain calls go on, /readyz stays 200', async () => {
    const open = ((await charge(a, 300)).json() as { confirmation: { id: string } }).confirmation.id;
    expect(await readyz(a)).toEqual({ status: 200, redis: 'up' });
    await redis.stop('SIGKILL');
    await eventually(async () => (await readyz(a)).redis === 'down' && (await readyz(b)).redis === 'down', 'both replicas see Redis down');
    expect((await readyz(a)).status).toBe(200);

    const before = charges();
    const gated = await charge(a, 400);
    expect(gated.statusCode).toBe(503);
    expect(errorCode(gated)).toBe('UNAVAILABLE');
    expect(gated.headers['retry-after']).toBe('1');
    const idem = await charge(b, 9, { 'idempotency-key': `idem-down-${Date.now()}` });
    expect(idem.statusCode).toBe(503);
    expect(errorCode(idem)).toBe('UNAVAILABLE');
    const decision = await decide(b, open, 'ops');
    expect(decision.statusCode).toBe(503);
    expect(charges()).toBe(before);

    // Needs no shared state: runs. With a session the loop guard would need Redis: it fails open.
    expect((await charge(a, 10)).statusCode).toBe(200);
    expect((await a.call('util.echo', { hi: 1 }, { key: KEYS.agent, sessionId: 's-1' })).statusCode).toBe(200);
    expect(charges()).toBe(before + 1);

    await redis.restart();
    await eventually(async () => (await readyz(a)).redis === 'up' && (await readyz(b)).redis === 'up', 'both replicas see Redis up');
    const pending = await charge(b, 500);
    expect(pending.statusCode).toBe(202);
    const id = (pending.json() as { confirmation: { id: string } }).confirmation.id;
    expect((await decide(a, id, 'ops')).statusCode).toBe(200);
    expect(charges()).toBe(before + 2);
  });

  it('Redis hanging: a gated call answers 503 after the command timeout instead of waiting, plain calls go on', async () => {
    redis.pause();
    try {
      const gated = await charge(a, 600);
      expect(gated.statusCode).toBe(503);
      expect(errorCode(gated)).toBe('UNAVAILABLE');
      expect((await a.call('util.echo', { plain: true }, { key: KEYS.agent })).statusCode).toBe(200);
    } finally {
      redis.resume();
    }
    expect((await charge(b, 700)).statusCode).toBe(202);
  });
});
