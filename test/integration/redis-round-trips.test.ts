import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { connectRedis } from '../../src/state/redis.js';
import { echoTool, startGateway, type TestGateway } from '../helpers/app.js';
import { TestRedis } from '../helpers/redis.js';

/** One command as MONITOR shows it: who sent it (`lua` for a script's own commands) and its words. */
interface Seen {
  source: string;
  args: string[];
}

const errorCode = (r: { json(): unknown }) => (r.json() as { error?: { code?: string } }).error?.code;

/**
 * What one call costs in Redis, read off a real redis-server's MONITOR: the state a call reads and
 * writes before it runs (caller and tool rate limits, Idempotency-Key claim, loop guard) goes in one
 * command, whatever the outcome; the audit stream's commands are told apart by their key.
 */
describe('one Redis round trip per call', () => {
  let redis: TestRedis;
  let monitor: Redis;
  let mon: Redis | undefined;
  let gw: TestGateway;
  const seen: Seen[] = [];

  beforeAll(async () => {
    redis = await TestRedis.start();
    monitor = await connectRedis(redis.url, {});
    monitor.on('error', () => undefined);
    mon = await monitor.monitor();
    mon.on('monitor', (_time: string, args: string[], source: string) => seen.push({ source, args }));
    gw = await startGateway({
      config: { state: { redis: redis.url }, limits: { rateLimit: { requests: 50, windowSeconds: 60 }, loopRepeats: 2, loopWindowSeconds: 60 } },
      tools: {
        'echo.yaml': echoTool('util.echo', { rateLimit: { requests: 50, windowSeconds: 60 } }),
        'scarce.yaml': echoTool('util.scarce', { rateLimit: { requests: 1, windowSeconds: 60 } }),
      },
    });
    expect((await gw.call('util.echo', { warm: true })).statusCode).toBe(200); // connections up, scripts loaded
  });
  afterAll(async () => {
    await gw?.close();
    mon?.disconnect();
    monitor?.disconnect();
    await redis?.stop('SIGTERM');
  });

  /** The gateway's top-level commands (not a script's inner ones, not the audit stream's) while `fn` runs. */
  async function stateCommands(fn: () => Promise<unknown>): Promise<Seen[]> {
    await gw.audit(); // the audit stream's earlier batches are out of the way
    await monitor.ping().catch(() => undefined);
    await new Promise((r) => setTimeout(r, 50));
    const from = seen.length;
    await fn();
    await gw.audit();
    await new Promise((r) => setTimeout(r, 50)); // MONITOR lines of the last commands
    // Not the call's: the audit stream's batches, and the periodic sweep for calls a dead replica left running.
    const background = (a: string) => a.startsWith('toolgate:audit') || a === 'toolgate:calls:running';
    return seen.slice(from).filter((c) => c.source !== 'lua' && !c.args.some(background));
  }

  it('a call with a session under caller and tool rate limits costs one command', async () => {
    const cmds = await stateCommands(async () => expect((await gw.call('util.echo', { n: 1 }, { sessionId: 's-one' })).statusCode).toBe(200));
    expect(cmds).toHaveLength(1);
    expect(cmds[0]!.args[0]!.toLowerCase()).toBe('evalsha');
    const keys = cmds[0]!.args.filter((a) => a.startsWith('toolgate:'));
    expect(keys.map((k) => k.replace(/:[0-9a-f]{64}$/, ''))).toEqual(['toolgate:rl:caller', 'toolgate:rl:tool', 'toolgate:loop']);
  });

  it('an Idempotency-Key call: one command before it runs, one to store its response; the replay costs one', async () => {
    const headers = { 'idempotency-key': `idem-${Date.now()}` };
    let first: { callId: string } | undefined;
    const run = await stateCommands(async () => {
      const r = await gw.call('util.echo', { n: 2 }, { sessionId: 's-idem', headers });
      expect(r.statusCode).toBe(200);
      first = r.json() as { callId: string };
    });
    expect(run.map((c) => c.args[0]!.toLowerCase())).toEqual(['evalsha', 'set']);
    const replay = await stateCommands(async () => {
      const r = await gw.call('util.echo', { n: 2 }, { sessionId: 's-idem', headers });
      expect(r.statusCode).toBe(200);
      expect((r.json() as { callId: string }).callId).toBe(first!.callId);
    });
    expect(replay).toHaveLength(1);
  });

  it('a replay is no repeat for the loop guard, and a refused repeat holds no Idempotency-Key', async () => {
    const headers = { 'idempotency-key': `idem-loop-${Date.now()}` };
    const args = { n: 3 };
    for (let i = 0; i < 4; i++) expect((await gw.call('util.echo', args, { sessionId: 's-loop', headers })).statusCode).toBe(200); // 1 run + 3 replays
    expect((await gw.call('util.echo', args, { sessionId: 's-loop' })).statusCode).toBe(200); // the second run: at the limit
    const other = { 'idempotency-key': `idem-loop-2-${Date.now()}` };
    const cmds = await stateCommands(async () => {
      const looped = await gw.call('util.echo', args, { sessionId: 's-loop', headers: other });
      expect(looped.statusCode).toBe(429);
      expect(errorCode(looped)).toBe('LOOP_DETECTED');
      expect(Number(looped.headers['retry-after'])).toBeGreaterThan(0);
    });
    expect(cmds).toHaveLength(1); // the refusal came with the script's answer: nothing to free afterwards
    // The refused call's key was never claimed: the same key with other arguments is a new call, not a CONFLICT.
    expect((await gw.call('util.echo', { n: 4 }, { sessionId: 's-loop', headers: other })).statusCode).toBe(200);
  });

  it('a rate-limited call is refused with its Retry-After from the same single command', async () => {
    expect((await gw.call('util.scarce', { n: 1 })).statusCode).toBe(200);
    const cmds = await stateCommands(async () => {
      const r = await gw.call('util.scarce', { n: 2 });
      expect(r.statusCode).toBe(429);
      expect(errorCode(r)).toBe('RATE_LIMITED');
      const retry = Number(r.headers['retry-after']);
      expect(retry).toBeGreaterThan(0);
      expect(retry).toBeLessThanOrEqual(60);
    });
    expect(cmds).toHaveLength(1);
  });

  it('after a Redis restart (scripts flushed) calls go on: the script is loaded again', async () => {
    // The MONITOR connection must not follow: ioredis reconnecting a monitor sends INFO into the
    // monitor stream and throws "Command queue state error" (an uncaught error, not this test's).
    mon?.disconnect();
    monitor.disconnect();
    await redis.stop('SIGKILL');
    await redis.restart();
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = (await gw.call('util.echo', { n: 5 }, { sessionId: 's-restart', headers: { 'idempotency-key': `idem-restart-${i}-${Date.now()}` } })).statusCode;
      if (status !== 200) await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(200);
  });
});
