import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Upstream, json } from '../helpers/upstream.js';
import { httpTool, startGateway, type TestGateway } from '../helpers/app.js';

const AGENT = 'k-cache-agent-1';
const OTHER = 'k-cache-agent-2';
const WEATHER_ONLY = 'k-cache-weather-only';

/** Tool memory: `cache: { ttlSeconds }` and `fallback: { cache: true }`, on the gateway's injected clock. */
describe('result cache', () => {
  let up: Upstream;
  let gw: TestGateway;
  let clock = Date.UTC(2026, 0, 1);
  let failing = false;
  const hits = (path: string) => up.seen.filter((s) => s.url.startsWith(path)).length;
  const args = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((req, res) => {
      const url = req.url ?? '';
      if (url.startsWith('/flaky') && failing) return json(res, 500, { error: 'down' });
      json(res, 200, { url, n: up.seen.length });
    });
    gw = await startGateway({
      now: () => clock,
      config: {
        limits: { loopRepeats: 100, loopWindowSeconds: 60 },
        auth: {
          keys: [
            { id: 'agent-1', key: AGENT, roles: ['agent'] },
            { id: 'agent-2', key: OTHER, roles: ['agent'] },
            { id: 'weather-bot', key: WEATHER_ONLY, roles: ['agent'], tools: ['weather.*'] },
          ],
        },
      },
      tools: {
        'cached.yaml': httpTool('mem.cached', `${up.url}/data?q={{q}}`, { inputSchema: args, cache: { ttlSeconds: 60 } }),
        'lastgood.yaml': httpTool('mem.lastgood', `${up.url}/flaky?q={{q}}`, { inputSchema: args, retry: { attempts: 1 }, fallback: { cache: true } }),
      },
    });
  });
  afterAll(async () => {
    await gw.close();
    await up.close();
  });

  it('answers identical arguments from the cache, for any caller allowed to see the tool', async () => {
    const first = await gw.call('mem.cached', { q: 'paris' }, { key: AGENT });
    expect(first.statusCode).toBe(200);
    expect(first.json()).not.toHaveProperty('cached');
    expect(hits('/data')).toBe(1);

    const again = await gw.call('mem.cached', { q: 'paris' }, { key: OTHER });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ cached: true, backend: 'cache', result: first.json().result });
    expect(hits('/data')).toBe(1); // no second upstream call

    const record = (await gw.audit()).filter((r) => r.tool === 'mem.cached').at(-1);
    expect(record).toMatchObject({ outcome: 'ok', caller: 'agent-2', backend: 'cache', policy: { cached: true } });
  });

  it('misses for other arguments', async () => {
    const res = await gw.call('mem.cached', { q: 'oslo' }, { key: AGENT });
    expect(res.statusCode).toBe(200);
    expect(res.json()).not.toHaveProperty('cached');
    expect(hits('/data?q=oslo')).toBe(1);
  });

  it('goes upstream again once the TTL has passed', async () => {
    clock += 61_000;
    const res = await gw.call('mem.cached', { q: 'paris' }, { key: AGENT });
    expect(res.statusCode).toBe(200);
    expect(res.json()).not.toHaveProperty('cached');
    expect(hits('/data?q=paris')).toBe(2);
    const after = await gw.call('mem.cached', { q: 'paris' }, { key: AGENT });
    expect(after.json()).toMatchObject({ cached: true });
    expect(hits('/data?q=paris')).toBe(2);
  });

  it('gives nothing from the cache to a caller who cannot see the tool', async () => {
    const res = await gw.call('mem.cached', { q: 'paris' }, { key: WEATHER_ONLY });
    expect(res.statusCode).toBe(403);
    expect(res.json()).not.toHaveProperty('result');
    expect(res.json()).not.toHaveProperty('cached');
  });

  it('fallback cache: answers from the last good result, stating its age; without one the error stands', async () => {
    const good = await gw.call('mem.lastgood', { q: 'rome' }, { key: AGENT });
    expect(good.statusCode).toBe(200);
    expect(good.json()).toMatchObject({ fallback: null });

    failing = true;
    clock += 42_000;
    const res = await gw.call('mem.lastgood', { q: 'rome' }, { key: AGENT });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ backend: 'fallback', fallback: { kind: 'cache', reason: 'UPSTREAM_ERROR', ageSeconds: 42 } });
    expect(body.result.content[0].text).toContain('[from cache, 42 s old');
    expect(body.result.content.slice(1)).toEqual(good.json().result.content);
    const record = (await gw.audit()).filter((r) => r.tool === 'mem.lastgood').at(-1);
    expect(record).toMatchObject({ outcome: 'fallback', policy: { fallback: { kind: 'cache', ageSeconds: 42 } } });

    const never = await gw.call('mem.lastgood', { q: 'lima' }, { key: AGENT });
    expect(never.statusCode).toBeGreaterThanOrEqual(500);
    expect(never.json()).toMatchObject({ error: { code: expect.stringMatching(/UPSTREAM_ERROR|CIRCUIT_OPEN/) } });
  });
});
