import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import type { Redis } from 'ioredis';
import { BREAKER_CHANNEL } from '../../src/resilience/breaker-sync.js';
import { connectRedis, redisClientOptions } from '../../src/state/redis.js';
import { httpTool, startGateway, type TestGateway } from '../helpers/app.js';
import { TestRedis } from '../helpers/redis.js';
import { Upstream, json } from '../helpers/upstream.js';

const errorCode = (r: LightMyRequestResponse) => (r.json() as { error?: { code?: string } }).error?.code;

/** Breaker opens and closes travel between replicas over Redis pub/sub. */
describe('breakers shared by two replicas', () => {
  let redis: TestRedis;
  let probe: Redis;
  let up: Upstream;
  let a: TestGateway;
  let b: TestGateway;
  const failing = new Set<string>();
  const hits = (path: string) => up.seen.filter((s) => s.url === path).length;

  beforeAll(async () => {
    redis = await TestRedis.start();
    up = await new Upstream().start();
    up.on((req, res) => (failing.has(req.url ?? '') ? json(res, 503, { error: 'down' }) : json(res, 200, { ok: req.url })));
    const tool = (name: string, path: string, resetTimeoutMs: number) =>
      httpTool(name, `${up.url}${path}`, { retry: { attempts: 1 }, breaker: { failureThreshold: 2, resetTimeoutMs } });
    const replica = () =>
      startGateway({
        config: { state: { redis: redis.url } },
        tools: {
          'stuck.yaml': tool('t.stuck', '/stuck', 60_000),
          'heal.yaml': tool('t.heal', '/heal', 200),
          'alone.yaml': tool('t.alone', '/alone', 60_000),
        },
      });
    [a, b] = await Promise.all([replica(), replica()]);
    probe = await connectRedis(redis.url, { ...redisClientOptions(), enableOfflineQueue: true, maxRetriesPerRequest: null });
    probe.on('error', () => undefined);
    // Both replicas listen before anything is published.
    for (let i = 0; i < 200; i++) {
      const [, n] = (await probe.pubsub('NUMSUB', BREAKER_CHANNEL)) as [string, number];
      if (Number(n) >= 2) break;
      await new Promise((r) => setTimeout(r, 25));
    }
  });
  afterAll(async () => {
    probe?.disconnect();
    await Promise.all([a?.close(), b?.close()]);
    await up?.close();
    await redis?.stop('SIGTERM');
  });

  it('a breaker opened on A stops B from sending to that backend', async () => {
    failing.add('/stuck');
    const bOpen = b.waitForState('t.stuck', 'up', 'open');
    for (let i = 0; i < 2; i++) expect((await a.call('t.stuck', {})).statusCode).toBe(502);
    expect(errorCode(await a.call('t.stuck', {}))).toBe('CIRCUIT_OPEN');
    await bOpen;
    const before = hits('/stuck');
    const onB = await b.call('t.stuck', {});
    expect(onB.statusCode).toBe(503);
    expect(errorCode(onB)).toBe('CIRCUIT_OPEN');
    expect(hits('/stuck')).toBe(before);
  });

  it('a close on A (after a good half-open probe) closes B too', async () => {
    failing.add('/heal');
    const bOpen = b.waitForState('t.heal', 'up', 'open');
    for (let i = 0; i < 2; i++) expect((await a.call('t.heal', {})).statusCode).toBe(502);
    await bOpen;
    failing.delete('/heal');
    const aHalfOpen = a.waitForState('t.heal', 'up', 'half_open');
    const bClosed = b.waitForState('t.heal', 'up', 'closed');
    await aHalfOpen;
    expect((await a.call('t.heal', {})).statusCode).toBe(200);
    await bClosed; // B made no call itself: only A's published close could close it
  });

  it('with Redis down, each replica still keeps its own breakers', async () => {
    await redis.stop('SIGKILL');
    failing.add('/alone');
    for (let i = 0; i < 2; i++) expect((await a.call('t.alone', {})).statusCode).toBe(502);
    const before = hits('/alone');
    expect(errorCode(await a.call('t.alone', {}))).toBe('CIRCUIT_OPEN');
    expect(hits('/alone')).toBe(before);
    await redis.restart();
  });
});
