import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import { Upstream, json } from '../helpers/upstream.js';
import { until } from '../helpers/wait.js';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { seededRng } from '../helpers/rng.js';

/** Failover, breakers, retries, deadlines and disabling, against real upstreams on 127.0.0.1. */
describe('resilience', () => {
  let a: Upstream;
  let b: Upstream;
  let gw: TestGateway;
  const hits = (u: Upstream, path: string) => u.seen.filter((s) => s.url.startsWith(path)).length;
  const tool = (name: string, backends: unknown[], extra: Record<string, unknown> = {}) => ({
    name,
    description: name,
    sideEffect: 'read',
    inputSchema: { type: 'object', properties: { n: { type: 'integer' } } },
    backends,
    ...extra,
  });
  const http = (u: Upstream, path: string, extra: Record<string, unknown> = {}) => ({ http: { url: `${u.url}${path}` }, ...extra });

  let failA = new Set<string>();
  let holdProbe = false;
  const heldProbes: ServerResponse[] = [];
  /** Paths that fail with 503 this many more times, then succeed. */
  const failTimes = new Map<string, number>();
  beforeAll(async () => {
    a = await new Upstream().start();
    b = await new Upstream().start();
    a.on((req, res) => {
      const p = (req.url ?? '').split('?')[0]!;
      if (p === '/unauth') return json(res, 401, { error: 'bad key' });
      if (p === '/notfound') return json(res, 404, { error: 'no such thing' });
      if (p === '/limited') return json(res, 429, { error: 'slow down' }, { 'retry-after': '1' });
      if (failA.has(p)) return json(res, 503, { error: 'down' });
      if (p === '/probe' && holdProbe) return void heldProbes.push(res);
      const left = failTimes.get(p) ?? 0;
      if (left > 0) {
        failTimes.set(p, left - 1);
        return json(res, 503, { error: 'flaky' });
      }
      json(res, 200, { from: 'a', path: p });
    });
    b.on((req, res) => json(res, 200, { from: 'b', path: (req.url ?? '').split('?')[0] }));
    gw = await startGateway({
      rng: seededRng(3),
      tools: {
        'failover.yaml': tool('t.failover', [
          { id: 'primary', priority: 0, ...http(a, '/failover') },
          { id: 'replica', priority: 1, ...http(b, '/failover') },
        ]),
        'breaker.yaml': tool('t.breaker', [{ id: 'only', ...http(a, '/breaker') }], {
          retry: { attempts: 1 },
          breaker: { failureThreshold: 3, resetTimeoutMs: 400 },
        }),
        'probe.yaml': tool('t.probe', [{ id: 'only', ...http(a, '/probe') }], {
          retry: { attempts: 1 },
          breaker: { failureThreshold: 3, resetTimeoutMs: 300 },
        }),
        'waits.yaml': tool('t.waits', [{ id: 'only', ...http(a, '/limited') }], { timeoutMs: 4000, retry: { attempts: 2, backoffMs: 10 } }),
        'notfound.yaml': tool('t.notfound', [{ id: 'only', ...http(a, '/notfound') }], { breaker: { failureThreshold: 2 } }),
        'unauth.yaml': tool('t.unauth', [{ id: 'main', ...http(a, '/unauth') }]),
        'retry.yaml': tool('t.retry', [{ id: 'only', ...http(a, '/retry') }], { retry: { attempts: 3, backoffMs: 20 }, breaker: { failureThreshold: 50 } }),
        'write.yaml': tool('t.write', [{ id: 'first', ...http(a, '/write') }, { id: 'second', priority: 1, ...http(b, '/write') }], {
          sideEffect: 'write',
          confirm: false,
        }),
        'write-refused.yaml': tool(
          't.write_refused',
          [
            { id: 'dead', priority: 0, http: { method: 'POST', url: 'http://127.0.0.1:9/x' } },
            { id: 'alive', priority: 1, ...http(b, '/write-refused') },
          ],
          { sideEffect: 'write', confirm: false },
        ),
        'deadline.yaml': tool('t.deadline', [{ id: 'only', ...http(a, '/deadline') }], {
          timeoutMs: 600,
          retry: { attempts: 10, backoffMs: 50 },
          breaker: { failureThreshold: 100 },
        }),
        'limited.yaml': tool('t.limited', [{ id: 'only', ...http(a, '/limited') }], { timeoutMs: 500, retry: { attempts: 3, backoffMs: 10 } }),
        'weights.yaml': tool('t.weights', [
          { id: 'heavy', weight: 80, ...http(a, '/weights') },
          { id: 'light', weight: 20, ...http(b, '/weights') },
        ]),
      },
    });
  });
  afterEach(() => {
    failA = new Set();
  });
  afterAll(async () => {
    await gw.close();
    await a.close();
    await b.close();
  });

  it('shares traffic 80/20 by weight over real calls', async () => {
    const n = 400;
    const results = [];
    for (let i = 0; i < n; i += 10) results.push(...(await Promise.all(Array.from({ length: 10 }, () => gw.call('t.weights', {})))));
    const heavy = results.filter((r) => r.json().backend === 'heavy').length;
    expect(heavy / n).toBeGreaterThan(0.74);
    expect(heavy / n).toBeLessThan(0.86);
    expect(hits(a, '/weights') + hits(b, '/weights')).toBe(n);
  });

  it('fails over to the next priority when the first answers 5xx', async () => {
    failA.add('/failover');
    const res = await gw.call('t.failover', {});
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ backend: 'replica', attempts: 2, policy: { tried: ['primary', 'replica'], failover: true } });
    expect(res.json().result.structuredContent.from).toBe('b');
  });

  it('opens the breaker after the threshold, stops touching the upstream, then a half-open probe closes it', async () => {
    failA.add('/breaker');
    for (let i = 0; i < 3; i++) expect((await gw.call('t.breaker', {})).statusCode).toBe(502);
    const before = hits(a, '/breaker');
    const open = await gw.call('t.breaker', {});
    expect(open.statusCode).toBe(503);
    expect(open.json().error.code).toBe('CIRCUIT_OPEN');
    expect(Number(open.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(hits(a, '/breaker')).toBe(before);
    const shown = await gw.app.inject({ method: 'GET', url: '/v1/tools/t.breaker' });
    expect(shown.json().backends[0]).toMatchObject({ id: 'only', state: 'open' });

    const halfOpen = gw.waitForState('t.breaker', 'only', 'half_open');
    failA.delete('/breaker');
    await halfOpen;
    const probe = await gw.call('t.breaker', {});
    expect(probe.statusCode).toBe(200);
    expect(hits(a, '/breaker')).toBe(before + 1);
    expect((await gw.app.inject({ method: 'GET', url: '/v1/tools/t.breaker' })).json().backends[0].state).toBe('closed');
  });

  it('lets exactly one probe through while half-open', async () => {
    failA.add('/probe');
    for (let i = 0; i < 3; i++) await gw.call('t.probe', {});
    expect((await gw.call('t.probe', {})).json().error.code).toBe('CIRCUIT_OPEN');
    const halfOpen = gw.waitForState('t.probe', 'only', 'half_open');
    failA.delete('/probe');
    holdProbe = true;
    await halfOpen;
    const before = hits(a, '/probe');
    const probe = gw.call('t.probe', {});
    await until(() => heldProbes.length === 1);
    const during = await gw.call('t.probe', {});
    expect(during.json().error.code).toBe('CIRCUIT_OPEN');
    holdProbe = false;
    heldProbes.splice(0).forEach((r) => json(r, 200, { from: 'a' }));
    expect((await probe).statusCode).toBe(200);
    expect(hits(a, '/probe')).toBe(before + 1);
    expect((await gw.call('t.probe', {})).statusCode).toBe(200);
  });

  it('does not count client errors (4xx) against the breaker', async () => {
    for (let i = 0; i < 6; i++) expect((await gw.call('t.notfound', {})).statusCode).toBe(502);
    expect(hits(a, '/notfound')).toBe(6);
    expect((await gw.app.inject({ method: 'GET', url: '/v1/tools/t.notfound' })).json().backends[0].state).toBe('closed');
  });

  it('disables a backend that answers 401 until an admin re-enables it', async () => {
    const first = await gw.call('t.unauth', {});
    expect(first.statusCode).toBe(502);
    const second = await gw.call('t.unauth', {});
    expect(second.statusCode).toBe(503);
    expect(second.json().error.code).toBe('BACKEND_DISABLED');
    expect(hits(a, '/unauth')).toBe(1);
    const enable = await gw.app.inject({ method: 'POST', url: '/admin/tools/t.unauth/backends/main/enable' });
    expect(enable.json()).toMatchObject({ wasDisabled: true, state: 'closed' });
    await gw.call('t.unauth', {});
    expect(hits(a, '/unauth')).toBe(2);
  });

  it('a tool file change re-enables a disabled backend', async () => {
    await gw.call('t.unauth', {});
    expect((await gw.call('t.unauth', {})).json().error.code).toBe('BACKEND_DISABLED');
    gw.writeTool('unauth.yaml', tool('t.unauth', [{ id: 'main', ...http(a, '/unauth') }], { title: 'edited' }));
    await gw.app.gw.reload();
    expect((await gw.call('t.unauth', {})).statusCode).toBe(502); // reached the upstream again
  });

  it('retries an idempotent tool with backoff until it succeeds', async () => {
    failTimes.set('/retry', 2);
    const res = await gw.call('t.retry', {});
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ attempts: 3, policy: { retries: 2, tried: ['only', 'only', 'only'] } });
    expect(hits(a, '/retry')).toBe(3);
    failTimes.set('/retry', 5);
    const exhausted = await gw.call('t.retry', {});
    expect(exhausted.statusCode).toBe(502);
    expect(hits(a, '/retry')).toBe(6); // three more tries in all, then the error
  });

  it('never retries a non-idempotent tool, not even on another backend', async () => {
    failA.add('/write');
    const res = await gw.call('t.write', {});
    expect(res.statusCode).toBe(502);
    expect(hits(a, '/write')).toBe(1);
    expect(hits(b, '/write')).toBe(0);
    expect(res.json().error.details[0].status).toBe(503);
  });

  it('moves a non-idempotent call on when the request cannot have had an effect (connection refused)', async () => {
    const res = await gw.call('t.write_refused', {});
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ backend: 'alive', policy: { tried: ['dead', 'alive'] } });
    expect(hits(b, '/write-refused')).toBe(1);
  });

  it('ends the whole retry sequence by the tool deadline', async () => {
    failA.add('/deadline');
    const started = Date.now();
    const res = await gw.call('t.deadline', {});
    const elapsed = Date.now() - started;
    expect([502, 504]).toContain(res.statusCode);
    expect(hits(a, '/deadline')).toBeLessThan(10);
    expect(elapsed).toBeLessThan(600 + 500);
  });

  it("honours the upstream's Retry-After: no retry that would land past the deadline", async () => {
    const res = await gw.call('t.limited', {});
    expect(res.statusCode).toBe(502);
    expect(res.json().error.details[0].status).toBe(429);
    expect(hits(a, '/limited')).toBe(1); // Retry-After: 1 s is beyond the 500 ms deadline
  });

  it("waits out the upstream's Retry-After before the next try when the deadline allows", async () => {
    const from = a.seen.length;
    const res = await gw.call('t.waits', {});
    expect(res.statusCode).toBe(502);
    const tries = a.seen.slice(from).filter((s) => s.url.startsWith('/limited'));
    expect(tries).toHaveLength(2);
    expect(tries[1]!.at - tries[0]!.at).toBeGreaterThanOrEqual(950);
  });
});
