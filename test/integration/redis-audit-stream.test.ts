import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { spoolPathFor } from '../../src/audit/create.js';
import { auditRecord } from '../../src/audit/record.js';
import { RedisStreamSink } from '../../src/audit/redis-stream-sink.js';
import { connectRedis, redisClientOptions } from '../../src/state/redis.js';
import { echoTool, startGateway, type TestGateway } from '../helpers/app.js';
import { TestRedis } from '../helpers/redis.js';

async function eventually(cond: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${what} not reached`);
}

/** Records in the stream, oldest first, parsed from their one `record` field. */
async function streamRecords(client: Redis, stream: string): Promise<Record<string, unknown>[]> {
  const entries = await client.xrange(stream, '-', '+');
  return entries.map(([, fields]) => {
    expect(fields[0]).toBe('record');
    return JSON.parse(fields[1] as string) as Record<string, unknown>;
  });
}

let redis: TestRedis;
let client: Redis;
beforeAll(async () => {
  redis = await TestRedis.start({ persistDir: mkdtempSync(join(tmpdir(), 'toolgate-redis-')) });
  client = await connectRedis(redis.url, { ...redisClientOptions(), enableOfflineQueue: true, maxRetriesPerRequest: null });
  client.on('error', () => undefined); // the test kills Redis on purpose
});
afterAll(async () => {
  client?.disconnect();
  await redis?.stop('SIGTERM');
});

describe('audit records in the Redis stream', () => {
  it('a replayed spool after a lost ack adds nothing twice, and keeps the order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-spool-'));
    const stream = 'toolgate:audit:test-replay';
    const [r1, r2, r3] = [1, 2, 3].map((n) => auditRecord({ event: 'call', callId: `c-${n}` }));
    const first = new RedisStreamSink({ url: redis.url, stream, maxLen: 1000, spoolPath: join(dir, 'first.spool.jsonl') });
    first.write(r1!);
    first.write(r2!);
    await first.close();
    // As if r1 and r2 were delivered but their acks lost: they sit in the spool again, before r3.
    const spoolPath = join(dir, 'second.spool.jsonl');
    writeFileSync(spoolPath, [r1, r2, r3].map((r) => JSON.stringify(r)).join('\n') + '\n{"id":"torn');
    const second = new RedisStreamSink({ url: redis.url, stream, maxLen: 1000, spoolPath });
    await eventually(async () => (await second.flush(), second.spooled === 0), 'spool replayed');
    await second.close();
    expect((await streamRecords(client, stream)).map((r) => r['callId'])).toEqual(['c-1', 'c-2', 'c-3']);
  });

  describe('a gateway whose Redis is killed during a stream of calls', () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startGateway({ config: { state: { redis: redis.url } }, tools: { 'echo.yaml': echoTool('util.echo') } });
    });
    afterAll(async () => gw?.close());

    it('writes to toolgate:audit by default, with the spool next to the audit file', async () => {
      expect((await gw.call('util.echo', { warm: true })).statusCode).toBe(200);
      await gw.audit();
      await eventually(async () => (await streamRecords(client, 'toolgate:audit')).some((r) => r['event'] === 'call'), 'a record in the stream');
    });

    it('every call is in the stream exactly once, in the order of the audit file', async () => {
      const run = async (from: number, to: number) => {
        for (let i = from; i < to; i++) expect((await gw.call('util.echo', { i })).statusCode).toBe(200);
      };
      await run(0, 15);
      await redis.stop('SIGKILL');
      await run(15, 30); // calls that need no shared state go on; their records are spooled
      await gw.audit();
      expect(readFileSync(spoolPathFor(gw.auditFile), 'utf8').split('\n').filter(Boolean).length).toBeGreaterThanOrEqual(15);
      await redis.restart();
      await run(30, 45);

      const fileCalls = (await gw.audit()).filter((r) => r['event'] === 'call').map((r) => r['callId']);
      expect(fileCalls).toHaveLength(46);
      await eventually(async () => (await streamRecords(client, 'toolgate:audit')).filter((r) => r['event'] === 'call').length >= 46, 'all records in the stream');
      const streamCalls = (await streamRecords(client, 'toolgate:audit')).filter((r) => r['event'] === 'call').map((r) => r['callId']);
      expect(new Set(streamCalls).size).toBe(streamCalls.length);
      expect(streamCalls).toEqual(fileCalls);
    });
  });
});
