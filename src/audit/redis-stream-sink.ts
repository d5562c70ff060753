import type { Redis } from 'ioredis';
import { sha256Hex } from '../util/hash.js';
import { connectRedis, redisClientOptions } from '../state/redis.js';
import { Spool } from './spool.js';
import type { AuditRecord, AuditSink } from './types.js';

/**
 * Adds a batch of records, each once and in order: each record's seen-marker and its XADD happen in
 * one atomic script, so replaying a batch whose ack was lost (Redis applied it, the connection
 * dropped) adds nothing the second time. KEYS: the stream, then one seen-marker per record;
 * ARGV: MAXLEN, the marker TTL, then the records. Returns how many were added.
 */
const ADD_BATCH = `
local added = 0
for i = 2, #KEYS do
  if redis.call('SET', KEYS[i], '1', 'NX', 'EX', ARGV[2]) then
    redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'record', ARGV[i + 1])
    added = added + 1
  end
end
return added`;

/** How long a record id is remembered against replays. */
const SEEN_TTL_SECONDS = 24 * 3600;
/** Records per script call: one round trip each (Redis runs a batch in well under a millisecond). */
const BATCH = 100;

type AddBatch = (numKeys: number, ...args: string[]) => Promise<unknown>;

export interface StreamSinkOptions {
  url: string;
  stream: string;
  /** Approximate cap on the stream's length (MAXLEN ~). */
  maxLen: number;
  spoolPath: string;
  flushIntervalMs?: number;
  /** How often a non-empty spool is retried besides on reconnect. */
  retryIntervalMs?: number;
  onWarning?: (msg: string, err?: unknown) => void;
}

/**
 * Audit records to a Redis stream, one field `record` holding the JSON. Records that cannot be
 * delivered go to a local spool and are replayed in order when Redis returns: while the spool holds
 * anything, new records queue behind it, so the stream keeps the order they were written in.
 */
export class RedisStreamSink implements AuditSink {
  private readonly client: Promise<Redis>;
  private readonly spool: Spool;
  /** Records written since the last pump, with their ids (known here: no parse to find them). */
  private queue: string[] = [];
  private queueIds: string[] = [];
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private readonly retry: NodeJS.Timeout;
  private closed = false;
  private spooling = false;

  constructor(private readonly opts: StreamSinkOptions) {
    this.spool = new Spool(opts.spoolPath);
    this.client = connectRedis(opts.url, redisClientOptions()).then((c) => {
      c.on('ready', () => void this.flush().catch(() => undefined));
      c.on('error', () => undefined); // surfaces as failed sends, which spool
      c.defineCommand('tgAuditBatch', { lua: ADD_BATCH }); // EVALSHA, with EVAL once on NOSCRIPT
      return c;
    });
    this.client.catch((e: unknown) => opts.onWarning?.('audit stream: cannot load the Redis client', e));
    this.retry = setInterval(() => {
      if (this.spool.size > 0) void this.flush().catch(() => undefined);
    }, opts.retryIntervalMs ?? 1000);
    this.retry.unref();
  }

  write(record: AuditRecord): void {
    if (this.closed) throw new Error('audit sink is closed');
    this.queue.push(JSON.stringify(record));
    this.queueIds.push(record.id);
    this.timer ??= setTimeout(() => void this.flush().catch(() => undefined), this.opts.flushIntervalMs ?? 25);
  }

  /** Resolves once the record is in the stream or in the spool file. */
  async durable(record: AuditRecord): Promise<void> {
    this.write(record);
    await this.flush();
  }

  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const next = this.chain.then(() => this.pump());
    this.chain = next.catch((e: unknown) => this.opts.onWarning?.('audit stream: spool write failed', e));
    return next;
  }

  /** Records waiting in the spool (for tests and operators). */
  get spooled(): number {
    return this.spool.size;
  }

  private async pump(): Promise<void> {
    const batch = this.queue.splice(0);
    const ids = this.queueIds.splice(0);
    const c = await this.client.catch(() => undefined);
    const up = c?.status === 'ready';
    if (c && up && this.spool.size > 0) {
      const lines: string[] = [];
      const spooledIds: string[] = [];
      for (const l of await this.spool.read()) {
        const id = recordId(l);
        if (id === undefined) continue; // a torn last line from a crash is dropped
        lines.push(l);
        spooledIds.push(id);
      }
      await this.spool.keep(lines.slice(await this.send(c, lines, spooledIds)));
    }
    if (batch.length === 0) return;
    const sent = c && up && this.spool.size === 0 ? await this.send(c, batch, ids) : 0;
    if (sent < batch.length) {
      if (!this.spooling) this.opts.onWarning?.('audit stream unreachable: spooling records locally until Redis returns');
      await this.spool.append(batch.slice(sent));
    }
    this.spooling = this.spool.size > 0;
  }

  /** Sends in order, one script call per batch; returns how many were delivered before the first failure. */
  private async send(c: Redis, lines: readonly string[], ids: readonly string[]): Promise<number> {
    const add = (c as unknown as { tgAuditBatch: AddBatch }).tgAuditBatch.bind(c);
    for (let i = 0; i < lines.length; i += BATCH) {
      const chunk = lines.slice(i, i + BATCH);
      const seen = ids.slice(i, i + BATCH).map((id, k) => `toolgate:audit:seen:${id || sha256Hex(chunk[k]!)}`);
      try {
        await add(1 + chunk.length, this.opts.stream, ...seen, String(this.opts.maxLen), String(SEEN_TTL_SECONDS), ...chunk);
      } catch {
        return i; // this batch and the rest are spooled; a replay skips whatever Redis did add
      }
    }
    return lines.length;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.retry);
    await this.flush().catch(() => undefined);
    const c = await this.client.catch(() => undefined);
    await c?.quit().catch(() => c.disconnect());
  }
}

function recordId(line: string): string | undefined {
  try {
    const id = (JSON.parse(line) as { id?: unknown }).id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}
