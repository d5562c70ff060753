import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpTool, startGateway, type TestGateway } from '../helpers/app.js';
import { TestRedis } from '../helpers/redis.js';
import { startServerProcess } from '../helpers/server-process.js';
import { json, Upstream } from '../helpers/upstream.js';
import { until, untilAsync } from '../helpers/wait.js';

const msArgs = { type: 'object', required: ['ms'], properties: { ms: { type: 'integer' } } };

/**
 * Long-running calls across replicas sharing Redis: a call whose gateway was killed reads as
 * interrupted (not running forever) on every replica, and a replica that does not run a call can
 * still cancel it and stream its events.
 */
describe('long-running calls on Redis, across replicas', () => {
  let redis: TestRedis;
  let up: Upstream;
  let reader: TestGateway;
  const tools = () => ({ 'job.yaml': httpTool('jobs.slow', `${up.url}/slow?ms={{ms}}`, { async: true, inputSchema: msArgs, timeoutMs: 20000 }) });
  const config = () => ({ state: { redis: redis.url }, calls: { leaseSeconds: 1, progressIntervalMs: 100 } });

  beforeAll(async () => {
    redis = await TestRedis.start();
    up = await new Upstream().start();
    up.on((req, res) => {
      const ms = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('ms'));
      setTimeout(() => !res.destroyed && json(res, 200, { slept: ms }), ms);
    });
    reader = await startGateway({ config: config(), tools: tools() });
  }, 30_000);
  afterAll(async () => {
    await reader?.close();
    await up?.close();
    await redis?.stop('SIGTERM');
  });

  const read = async (callId: string) => (await reader.app.inject({ method: 'GET', url: `/v1/calls/${callId}` })).json() as Record<string, unknown>;

  it('a call whose gateway was killed (-9) is shown as interrupted once its lease lapses, and audited once', async () => {
    const proc = await startServerProcess({ config: config(), tools: tools() });
    try {
      const res = await fetch(`${proc.url}/v1/tools/jobs.slow/call`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { ms: 15000 } }) });
      expect(res.status).toBe(202);
      const { callId } = (await res.json()) as { callId: string };
      await until(() => up.seen.some((s) => s.url === '/slow?ms=15000'), 'the upstream to be reached');
      expect((await read(callId)).status).toBe('running'); // the other replica sees it running

      proc.child.kill('SIGKILL');
      await proc.exited;
      await untilAsync(async () => (await read(callId)).status === 'interrupted', 'the call to read as interrupted', 6000);
      expect(await read(callId)).toMatchObject({ status: 'interrupted', error: { code: 'INTERRUPTED' } });
      await reader.app.gw.background.sweep();
      const records = (await reader.audit()).filter((r) => r['callId'] === callId);
      expect(records).toEqual([expect.objectContaining({ outcome: 'error', errorCode: 'INTERRUPTED', tool: 'jobs.slow' })]);
    } finally {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
    }
  }, 30_000);

  it('another replica cancels a running call (its owner aborts the upstream) and follows its events to the end', async () => {
    const owner = await startGateway({ config: config(), tools: tools() });
    try {
      const { callId } = (await owner.call('jobs.slow', { ms: 12000 }, {})).json() as { callId: string };
      await until(() => up.seen.some((s) => s.url === '/slow?ms=12000'), 'the upstream to be reached');
      const events = reader.app.inject({ method: 'GET', url: `/v1/calls/${callId}/events` });
      const del = await reader.app.inject({ method: 'DELETE', url: `/v1/calls/${callId}` });
      expect(del.statusCode).toBe(202);
      expect(del.json()).toMatchObject({ callId, status: 'running', cancelRequested: true });
      await untilAsync(async () => (await read(callId)).status === 'cancelled', 'the owner to cancel', 5000);
      await until(() => up.seen.find((s) => s.url === '/slow?ms=12000')?.aborted === true, 'the upstream request to be aborted');
      const body = (await events).body;
      expect(body).toContain('event: started');
      expect(body).toMatch(/event: finished\ndata: \{[^\n]*"status":"cancelled"/);
    } finally {
      await owner.close();
    }
  }, 20_000);
});
