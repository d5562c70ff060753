import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import { Upstream, json } from '../helpers/upstream.js';
import { until } from '../helpers/wait.js';
import { echoTool, startGateway, type TestGateway } from '../helpers/app.js';

/** Fallbacks, Idempotency-Key, loop detection, bulkheads, and breaker state across reloads. */
describe('call policies', () => {
  let up: Upstream;
  let gw: TestGateway;
  const held: ServerResponse[] = [];
  const hits = (path: string) => up.seen.filter((s) => s.url.startsWith(path)).length;
  const down = (name: string, fallback: unknown) => ({
    name,
    description: name,
    sideEffect: 'read',
    fallback,
    retry: { attempts: 1 },
    backends: [{ id: 'down', http: { url: `${up.url}/down` } }],
  });

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((req, res) => {
      const p = req.url ?? '';
      if (p.startsWith('/down')) return json(res, 500, { error: 'broken' });
      if (p.startsWith('/hold')) return void held.push(res); // answered by the test
      json(res, 200, { ok: true, n: up.seen.length });
    });
    gw = await startGateway({
      config: { limits: { loopRepeats: 3, loopWindowSeconds: 60 } },
      tools: {
        'fb-message.yaml': down('fb.message', { message: 'Weather is unavailable; say so to the user.' }),
        'fb-result.yaml': down('fb.result', { result: { temp_c: null, stale: true } }),
        'fb-tool.yaml': down('fb.tool', { tool: 'fb.estimate' }),
        'estimate.yaml': echoTool('fb.estimate'),
        'fb-bad-args.yaml': { ...down('fb.args', { message: 'never for a client error' }), inputSchema: { type: 'object', required: ['x'] } },
        'counter.yaml': {
          name: 'pay.charge',
          description: 'charge',
          sideEffect: 'write',
          confirm: false,
          inputSchema: { type: 'object', properties: { amount: { type: 'number' } } },
          backends: [{ id: 'api', http: { method: 'POST', url: `${up.url}/charge`, body: '{{arguments}}' } }],
        },
        'slow.yaml': {
          name: 'slow.op',
          description: 'slow',
          sideEffect: 'read',
          concurrency: 2,
          backends: [{ id: 'api', http: { url: `${up.url}/hold` } }],
        },
        'echo.yaml': echoTool('debug.echo'),
      },
    });
  });
  afterAll(async () => {
    held.splice(0).forEach((r) => r.end('{}'));
    await gw.close();
    await up.close();
  });

  describe('fallbacks', () => {
    it('message: the model is told in text, and the response says why', async () => {
      const res = await gw.call('fb.message', {});
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        status: 'ok',
        backend: 'fallback',
        fallback: { kind: 'message', reason: 'UPSTREAM_ERROR' },
        result: { content: [{ type: 'text', text: 'Weather is unavailable; say so to the user.' }] },
      });
      const record = (await gw.audit()).filter((r) => r.tool === 'fb.message').at(-1);
      expect(record).toMatchObject({ outcome: 'fallback', policy: { fallback: { kind: 'message', reason: 'UPSTREAM_ERROR' } } });
    });

    it('result: a static structured result', async () => {
      const res = await gw.call('fb.result', {});
      expect(res.json()).toMatchObject({ fallback: { kind: 'result' }, result: { structuredContent: { temp_c: null, stale: true } } });
    });

    it('tool: another registered tool with the same arguments', async () => {
      const res = await gw.call('fb.tool', { city: 'Oslo' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        tool: 'fb.tool',
        fallback: { kind: 'tool', tool: 'fb.estimate', reason: 'UPSTREAM_ERROR' },
        result: { structuredContent: { city: 'Oslo' } },
      });
    });

    it('is not used for the caller\'s own mistakes', async () => {
      const res = await gw.call('fb.args', {});
      expect(res.statusCode).toBe(422);
    });
  });

  describe('Idempotency-Key', () => {
    it('replays the stored response without running the tool again', async () => {
      const before = hits('/charge');
      const headers = { 'idempotency-key': 'order-1' };
      const first = await gw.call('pay.charge', { amount: 10 }, { headers });
      const second = await gw.call('pay.charge', { amount: 10 }, { headers });
      expect(first.statusCode).toBe(200);
      expect(second.statusCode).toBe(200);
      expect(second.json().callId).toBe(first.json().callId);
      expect(second.json().result).toEqual(first.json().result);
      expect(second.json().policy.replayed).toBe(true);
      expect(hits('/charge')).toBe(before + 1);
    });

    it('another key is another call', async () => {
      const before = hits('/charge');
      await gw.call('pay.charge', { amount: 1 }, { headers: { 'idempotency-key': 'shared-key' } });
      await gw.call('pay.charge', { amount: 1 }, { headers: { 'idempotency-key': 'shared-key-2' } });
      expect(hits('/charge')).toBe(before + 2);
    });

    it('409 CONFLICT for the same key with other arguments', async () => {
      const headers = { 'idempotency-key': 'order-2' };
      await gw.call('pay.charge', { amount: 10 }, { headers });
      const other = await gw.call('pay.charge', { amount: 99 }, { headers });
      expect(other.statusCode).toBe(409);
      expect(other.json().error.code).toBe('CONFLICT');
    });

    it('409 CONFLICT while the first call with the key is still running', async () => {
      const headers = { 'idempotency-key': 'slow-1' };
      const first = gw.call('slow.op', {}, { headers });
      await until(() => held.length > 0);
      const second = await gw.call('slow.op', {}, { headers });
      expect(second.statusCode).toBe(409);
      expect(second.json().error.message).toContain('in flight');
      held.splice(0).forEach((r) => json(r, 200, { done: true }));
      expect((await first).statusCode).toBe(200);
    });
  });

  describe('loop detection', () => {
    it('stops the (loopRepeats+1)-th identical call in a session', async () => {
      const call = (args: unknown, sessionId?: string) => gw.call('debug.echo', args, sessionId ? { sessionId } : {});
      for (let i = 0; i < 3; i++) expect((await call({ q: 1 }, 's-1')).statusCode).toBe(200);
      const fourth = await call({ q: 1 }, 's-1');
      expect(fourth.statusCode).toBe(429);
      expect(fourth.json().error.code).toBe('LOOP_DETECTED');
      expect(fourth.json().error.modelMessage).toContain('change your approach');
      expect(fourth.headers['retry-after']).toBeDefined();
      expect((await call({ q: 2 }, 's-1')).statusCode).toBe(200); // other arguments
      expect((await call({ q: 1 }, 's-2')).statusCode).toBe(200); // another session
      for (let i = 0; i < 5; i++) expect((await call({ q: 1 })).statusCode).toBe(200); // no session: not tracked
    });
  });

  describe('bulkhead', () => {
    it('answers a fast UNAVAILABLE past the tool\'s concurrency, without slowing other tools', async () => {
      const a = gw.call('slow.op', {});
      const b = gw.call('slow.op', {});
      await until(() => held.length === 2);
      const third = await gw.call('slow.op', {});
      expect(third.statusCode).toBe(503);
      expect(third.json().error.code).toBe('UNAVAILABLE');
      expect(third.headers['retry-after']).toBe('1');
      expect((await gw.call('debug.echo', { other: true })).statusCode).toBe(200);
      held.splice(0).forEach((r) => json(r, 200, {}));
      expect((await a).statusCode).toBe(200);
      expect((await b).statusCode).toBe(200);
    });
  });

  describe('breaker state across reloads', () => {
    it('survives a reload that leaves the backend unchanged, and resets when it changes', async () => {
      const failing = { ...down('fb.none', undefined), breaker: { failureThreshold: 2, resetTimeoutMs: 60000 } };
      delete (failing as { fallback?: unknown }).fallback;
      gw.writeTool('breaker.yaml', failing);
      await gw.app.gw.reload();
      for (let i = 0; i < 2; i++) await gw.call('fb.none', {});
      expect((await gw.call('fb.none', {})).json().error.code).toBe('CIRCUIT_OPEN');
      gw.writeTool('other.yaml', echoTool('unrelated.tool'));
      await gw.app.gw.reload();
      expect((await gw.call('fb.none', {})).json().error.code).toBe('CIRCUIT_OPEN');
      gw.writeTool('breaker.yaml', { ...failing, backends: [{ id: 'down', http: { url: `${up.url}/down?v=2` } }] });
      await gw.app.gw.reload();
      expect((await gw.call('fb.none', {})).json().error.code).toBe('UPSTREAM_ERROR');
    });
  });
});
