import type { Redis } from 'ioredis';
import { sha256Hex } from '../util/hash.js';
import { connectRedis, redisClientOptions } from '../state/redis.js';
import { Spool } from './spool.js';
import type { AuditRecord, AuditSink } from './types.js';

/**
 * Adds a record once: the seen-marker and the XADD happen atomically, so replaying a record whose
 * ack was lost (Redis applied it, the connection dropped) adds nothing the second time.
 */
const ADD_ONCE = `
if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[3]) then
  return redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'record', ARGV[1])
end
return false`;

/** How long a record id is remembered against replays. */
const SEEN_TTL_SECONDS = 24 * 3600;
const PIPELINE = 100;

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
  private queue: string[] = [];
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
    const c = await this.client.catch(() => undefined);
    const up = c?.status === 'ready';
    if (c && up && this.spool.size > 0) {
      const lines = (await this.spool.read()).filter((l) => recordId(l) !== undefined); // a torn last line from a crash is dropped
      await this.spool.keep(lines.slice(await this.send(c, lines)));
    }
    if (batch.length === 0) return;
    const sent = c && up && this.spool.size === 0 ? await this.send(c, batch) : 0;
    if (sent < batch.length) {
      if (!this.spooling) this.opts.onWarning?.('audit stream unreachable: spooling records locally until Redis returns');
      await this.spool.append(batch.slice(sent));
    }
    this.spooling = this.spool.size > 0;
  }

  /** Sends in order; returns how many were delivered before the first failure. */
  private async send(c: Redis, lines: readonly string[]): Promise<number> {
    for (let i = 0; i < lines.length; i += PIPELINE) {
      const chunk = lines.slice(i, i + PIPELINE);
      const p = c.pipeline();
      for (const line of chunk) {
        const id = recordId(line) ?? sha256Hex(line);
        p.eval(ADD_ONCE, 2, this.opts.stream, `toolgate:audit:seen:${id}`, line, String(this.opts.maxLen), String(SEEN_TTL_SECONDS));
      }
      const results = await p.exec().catch(() => null);
      if (!results) return i;
      const failed = results.findIndex(([err]) => err);
      if (failed >= 0) return i + failed;
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
