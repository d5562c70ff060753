import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { echoTool, startGateway, type TestGateway } from '../helpers/app.js';
import { TestRedis } from '../helpers/redis.js';

const KEYS = { one: 'k-agent-000001', two: 'k-agent-000002' };
const errorCode = (r: LightMyRequestResponse) => (r.json() as { error?: { code?: string } }).error?.code;

/** Rate limits counted in Redis hold across two replicas: per caller (config) and per tool (tool file). */
describe('rate limits shared by two replicas', () => {
  let redis: TestRedis;
  let a: TestGateway;
  let b: TestGateway;

  beforeAll(async () => {
    redis = await TestRedis.start();
    const replica = () =>
      startGateway({
        config: {
          state: { redis: redis.url },
          limits: { rateLimit: { requests: 4, windowSeconds: 60 } },
          auth: {
            keys: [
              { id: 'agent-1', key: KEYS.one, roles: ['agent'] },
              { id: 'agent-2', key: KEYS.two, roles: ['agent'] },
            ],
          },
        },
        tools: {
          'echo.yaml': echoTool('util.echo'),
          'scarce.yaml': echoTool('util.scarce', { rateLimit: { requests: 2, windowSeconds: 60 } }),
        },
      });
    [a, b] = await Promise.all([replica(), replica()]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await redis?.stop('SIGTERM');
  });

  it('a tool limit counts every caller on every replica', async () => {
    expect((await a.call('util.scarce', { n: 1 }, { key: KEYS.one })).statusCode).toBe(200);
    expect((await b.call('util.scarce', { n: 2 }, { key: KEYS.two })).statusCode).toBe(200);
    const over = await b.call('util.scarce', { n: 3 }, { key: KEYS.one });
    expect(over.statusCode).toBe(429);
    expect(errorCode(over)).toBe('RATE_LIMITED');
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(over.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect((await a.call('util.scarce', { n: 4 }, { key: KEYS.two })).statusCode).toBe(429);
  });

  it('a caller limit counts that caller on every replica, and only that caller', async () => {
    // agent-1 used 2 calls above (one refused by the tool limit still counts against the caller).
    expect((await a.call('util.echo', { n: 5 }, { key: KEYS.one })).statusCode).toBe(200);
    expect((await b.call('util.echo', { n: 6 }, { key: KEYS.one })).statusCode).toBe(200);
    const over = await a.call('util.echo', { n: 7 }, { key: KEYS.one });
    expect(over.statusCode).toBe(429);
    expect(errorCode(over)).toBe('RATE_LIMITED');
    expect((await b.call('util.echo', { n: 8 }, { key: KEYS.two })).statusCode).toBe(200);
  });

  it('the refusal is audited as an error with its code', async () => {
    const records = await a.audit();
    expect(records.some((r) => r['event'] === 'call' && r['errorCode'] === 'RATE_LIMITED' && r['outcome'] === 'error')).toBe(true);
  });

  it('with Redis down the limits fail open: plain calls go on', async () => {
    await redis.stop('SIGKILL');
    for (let i = 0; i < 3; i++) expect((await a.call('util.echo', { i }, { key: KEYS.two })).statusCode).toBe(200);
    await redis.restart();
  });
});
