import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { auditRecord } from '../../src/audit/record.js';
import { RedisStreamSink } from '../../src/audit/redis-stream-sink.js';
import type { AuditRecord } from '../../src/audit/types.js';
import { connectRedis, redisClientOptions } from '../../src/state/redis.js';
import { TestRedis } from '../helpers/redis.js';

async function eventually(cond: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${what} not reached`);
}

const records = (from: number, to: number): AuditRecord[] => Array.from({ length: to - from }, (_, i) => auditRecord({ event: 'call', callId: `c-${from + i}` }));
const callIds = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `c-${from + i}`);

/** The stream's records' callIds, oldest first. */
async function streamCallIds(client: Redis, stream: string): Promise<unknown[]> {
  return (await client.xrange(stream, '-', '+')).map(([, fields]) => (JSON.parse(fields[1] as string) as Record<string, unknown>)['callId']);
}

/** Top-level script calls Redis has answered since the last CONFIG RESETSTAT. */
async function scriptCalls(client: Redis): Promise<number> {
  const info = await client.info('commandstats');
  return [...info.matchAll(/^cmdstat_(evalsha|eval):calls=(\d+)/gm)].reduce((a, m) => a + Number(m[2]), 0);
}

/** The audit stream sends records in batches: one script per batch, each record once, in order, through Redis failures. */
describe('audit stream batches', () => {
  let redis: TestRedis;
  let client: Redis;
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-batches-'));
  let n = 0;
  const sink = (stream: string) => new RedisStreamSink({ url: redis.url, stream, maxLen: 100_000, spoolPath: join(dir, `${++n}.spool.jsonl`), retryIntervalMs: 100 });

  beforeAll(async () => {
    redis = await TestRedis.start({ persistDir: mkdtempSync(join(tmpdir(), 'toolgate-redis-')) });
    client = await connectRedis(redis.url, { ...redisClientOptions(), enableOfflineQueue: true, maxRetriesPerRequest: null });
    client.on('error', () => undefined); // the tests kill Redis on purpose
  });
  afterAll(async () => {
    client?.disconnect();
    await redis?.stop('SIGTERM');
  });

  it('250 records land in order, in three script calls', async () => {
    const stream = 'toolgate:audit:batch-order';
    const s = sink(stream);
    s.write(auditRecord({ event: 'call', callId: 'warm' }));
    await eventually(async () => (await s.flush(), s.spooled === 0 && (await streamCallIds(client, stream)).length === 1), 'connected');
    await client.config('RESETSTAT');
    for (const r of records(0, 250)) s.write(r);
    await s.flush();
    expect(await scriptCalls(client)).toBe(3);
    expect(await streamCallIds(client, stream)).toEqual(['warm', ...callIds(0, 250)]);
    await s.close();
  });

  it('a batch whose answer is lost (Redis hangs past the command timeout) is spooled and replayed exactly once', async () => {
    const stream = 'toolgate:audit:batch-lost-ack';
    const s = sink(stream);
    for (const r of records(0, 10)) s.write(r);
    await eventually(async () => (await s.flush(), s.spooled === 0 && (await streamCallIds(client, stream)).length === 10), 'connected, the first records in');
    redis.pause();
    for (const r of records(10, 150)) s.write(r);
    const flushed = s.flush(); // sent, but the answer never comes in time: spooled after the command timeout
    await eventually(async () => s.spooled > 0, 'the unanswered batch spooled');
    redis.resume(); // Redis now runs the batches it had received: the records are in, the acks were lost
    await flushed;
    await eventually(async () => s.spooled === 0, 'spool replayed');
    for (const r of records(150, 160)) s.write(r);
    await s.close();
    expect(await streamCallIds(client, stream)).toEqual(callIds(0, 160));
  });

  it('Redis killed during a run of batches: what reached Redis stays, the rest is replayed, each record once and in order', async () => {
    const stream = 'toolgate:audit:batch-killed';
    const s = sink(stream);
    for (const r of records(0, 5)) s.write(r);
    await eventually(async () => (await s.flush(), s.spooled === 0 && (await streamCallIds(client, stream)).length === 5), 'connected, the first records in');
    for (const r of records(5, 1005)) s.write(r);
    const flushed = s.flush();
    await new Promise((r) => setTimeout(r, 5)); // some batches out, most not
    await redis.stop('SIGKILL');
    await flushed;
    for (const r of records(1005, 1020)) s.write(r); // behind the spool
    await s.flush();
    expect(s.spooled).toBeGreaterThan(0);
    await redis.restart();
    await eventually(async () => (await s.flush(), s.spooled === 0), 'spool replayed');
    await s.close();
    expect(await streamCallIds(client, stream)).toEqual(callIds(0, 1020));
  });
});
