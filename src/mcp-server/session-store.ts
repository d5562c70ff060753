import type { Redis } from 'ioredis';
import { connectRedis, redisClientOptions, redisUnavailable } from '../state/redis.js';
import { sha256Hex } from '../util/hash.js';

/** What an `initialize` said: replayed into a fresh Server when another replica takes the session over. */
export interface InitParams {
  protocolVersion: string;
  capabilities: Record<string, unknown>;
  clientInfo: Record<string, unknown>;
}

/** A 2025 session as every replica sees it (Redis): enough to rebuild its transport and Server anywhere. */
export interface SessionRecord {
  /** sessionKey() of the key or token that opened it: only that caller may use it. */
  callerKey: string;
  init: InitParams;
  /** The level a `logging/setLevel` chose, if any. */
  logLevel?: string | undefined;
  /** Resource URIs the session subscribed to (resources/subscribe). */
  subscriptions: string[];
  /** Per-session values of other features (e.g. tool-search candidates), by slot name. */
  slots: Record<string, unknown>;
}

/** A message for the replica that holds a session's GET stream: an event to write, or the session's end. */
export type StreamNote = { t: 'event'; id: string; message: unknown } | { t: 'closed' };

/** The session id as Redis keys name it: a digest, so Redis never holds a live session id. */
export const sessionHash = (id: string): string => sha256Hex(id).slice(0, 32);

const P = 'toolgate:mcp:';
const recordKey = (h: string) => `${P}session:${h}`;
const callerKey = (c: string) => `${P}caller:${sha256Hex(c).slice(0, 32)}`;
const ALL = `${P}sessions`;
const eventsKey = (h: string) => `${P}events:${h}`;
export const channelOf = (h: string) => `${P}stream:${h}`;
/** Events kept per session for a GET stream to resume from (the oldest go first). */
const MAX_EVENTS = 1000;

/**
 * Registers a session: the caller's and the global index are sorted sets scored by expiry, so
 * expired members are dropped before counting. Full (global) → -1; else the members evicted from
 * the caller's set (its least recently used, beyond perCaller).
 */
const OPEN = `
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return -1 end
redis.call('SET', KEYS[3], ARGV[6], 'PX', ARGV[7])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[7])
local evicted = {}
while redis.call('ZCARD', KEYS[1]) > tonumber(ARGV[4]) do
  local m = redis.call('ZPOPMIN', KEYS[1])[1]
  redis.call('ZREM', KEYS[2], m)
  table.insert(evicted, m)
end
return evicted`;

/** Keeps a session alive: its record's expiry and its place in both indexes. */
const TOUCH = `
if redis.call('PEXPIRE', KEYS[3], ARGV[3]) == 0 then return 0 end
redis.call('ZADD', KEYS[1], 'XX', ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], 'XX', ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[4], ARGV[3])
return 1`;

/** Stores one server-initiated message of a session and tells the replica that streams it. */
const DELIVER = `
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', 'm', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PUBLISH', KEYS[2], '{"t":"event","id":"' .. id .. '","message":' .. ARGV[1] .. '}')
return id`;

/**
 * The shared half of /mcp's 2025 sessions (Redis): records, per-caller and global bounds,
 * the GET stream's events (a Redis stream per session, for `Last-Event-ID`) and a pub/sub
 * channel per session to the replica that holds its GET stream. Any failing command is 503.
 */
export class RedisSessionStore {
  private readonly cmd: Promise<Redis>;
  private readonly sub: Promise<Redis>;
  private readonly listeners = new Map<string, (note: StreamNote) => void>();
  private readonly firstConnect: Promise<void>;

  constructor(url: string, private readonly ttlMs: number) {
    this.cmd = connectRedis(url, redisClientOptions()).then((c) => c.on('error', () => undefined));
    const subOpts = { ...redisClientOptions(), enableOfflineQueue: true, maxRetriesPerRequest: null, commandTimeout: undefined, autoResubscribe: false };
    this.sub = connectRedis(url, subOpts).then((c) => {
      c.on('error', () => undefined);
      c.on('message', (channel: string, raw: string) => this.heard(channel, raw));
      // Resubscribed on every reconnect by hand (ioredis's autoResubscribe drops its promise).
      c.on('ready', () => void (this.listeners.size ? c.subscribe(...this.listeners.keys()).catch(() => undefined) : undefined));
      return c;
    });
    this.firstConnect = this.cmd.then(firstReady).catch(() => undefined);
    this.cmd.catch(() => undefined);
    this.sub.catch(() => undefined);
  }

  private async run<T>(fn: (c: Redis) => Promise<T>): Promise<T> {
    try {
      const c = await this.cmd;
      await this.firstConnect; // at startup only; from then on commands fail fast while Redis is away
      return await fn(c);
    } catch (e) {
      throw redisUnavailable(e);
    }
  }

  /** Registers a new session; `full` when the global bound is reached, else the hashes of the caller's sessions it evicted. */
  async open(hash: string, rec: SessionRecord, perCaller: number, max: number): Promise<'full' | string[]> {
    const now = Date.now();
    const out = await this.run((c) => c.eval(OPEN, 3, callerKey(rec.callerKey), ALL, recordKey(hash), String(now), String(now + this.ttlMs), hash, String(perCaller), String(max), JSON.stringify(rec), String(this.ttlMs)));
    return out === -1 ? 'full' : (out as string[]);
  }

  async get(hash: string): Promise<SessionRecord | undefined> {
    const raw = await this.run((c) => c.get(recordKey(hash)));
    return raw ? (JSON.parse(raw) as SessionRecord) : undefined;
  }

  /** Writes the record again (its state changed); a session that ended meanwhile stays ended. */
  async save(hash: string, rec: SessionRecord): Promise<void> {
    await this.run((c) => c.set(recordKey(hash), JSON.stringify(rec), 'PX', this.ttlMs, 'XX'));
  }

  /** True while the session exists. */
  async touch(hash: string, rec: SessionRecord): Promise<boolean> {
    const n = await this.run((c) => c.eval(TOUCH, 4, callerKey(rec.callerKey), ALL, recordKey(hash), eventsKey(hash), String(Date.now() + this.ttlMs), hash, String(this.ttlMs)));
    return n === 1;
  }

  /** Ends the session on every replica: record, indexes, events; the stream's holder hears `closed`. */
  async remove(hash: string, callerKeyOf?: string): Promise<void> {
    await this.run(async (c) => {
      const multi = c.multi().del(recordKey(hash), eventsKey(hash)).zrem(ALL, hash);
      if (callerKeyOf !== undefined) multi.zrem(callerKey(callerKeyOf), hash);
      await multi.publish(channelOf(hash), JSON.stringify({ t: 'closed' } satisfies StreamNote)).exec();
    });
  }

  /** The first replica to ask for (session, key) within a minute gets true: one notification per session, not one per replica. */
  async once(hash: string, key: string): Promise<boolean> {
    return (await this.run((c) => c.set(`${P}once:${hash}:${key}`, '1', 'PX', 60_000, 'NX'))) === 'OK';
  }

  /** Stores a server-initiated message for the session's GET stream and publishes it to the stream's holder. */
  async deliver(hash: string, message: unknown): Promise<string> {
    return String(await this.run((c) => c.eval(DELIVER, 2, eventsKey(hash), channelOf(hash), JSON.stringify(message), String(this.ttlMs), String(MAX_EVENTS))));
  }

  /** Events after `lastId` (exclusive), oldest first. */
  async eventsAfter(hash: string, lastId: string): Promise<{ id: string; message: unknown }[]> {
    const rows = await this.run((c) => c.xrange(eventsKey(hash), `(${lastId}`, '+'));
    return rows.map(([id, fields]) => ({ id, message: JSON.parse(fields[1] ?? 'null') as unknown }));
  }

  /** The newest event's id ("0-0" when none yet): what a fresh stream primes its client with. */
  async lastEventId(hash: string): Promise<string> {
    const rows = await this.run((c) => c.xrevrange(eventsKey(hash), '+', '-', 'COUNT', 1));
    return rows[0]?.[0] ?? '0-0';
  }

  /** Hears the session's channel (one listener per session on this replica); resolves once subscribed. */
  async listen(hash: string, fn: (note: StreamNote) => void): Promise<() => void> {
    const channel = channelOf(hash);
    this.listeners.set(channel, fn);
    const sub = await this.sub;
    await sub.subscribe(channel).catch((e: unknown) => {
      this.listeners.delete(channel);
      throw redisUnavailable(e);
    });
    return () => {
      if (this.listeners.get(channel) !== fn) return;
      this.listeners.delete(channel);
      void sub.unsubscribe(channel).catch(() => undefined);
    };
  }

  private heard(channel: string, raw: string): void {
    const fn = this.listeners.get(channel);
    if (!fn) return;
    try {
      fn(JSON.parse(raw) as StreamNote);
    } catch {
      // Not ours: ignored.
    }
  }

  async close(): Promise<void> {
    this.listeners.clear();
    for (const p of [this.cmd, this.sub]) {
      const c = await p.catch(() => undefined);
      if (c) await c.quit().catch(() => c.disconnect());
    }
  }
}

/** At startup only: the first command waits (bounded) for the first connection. */
function firstReady(c: Redis): Promise<void> {
  if (c.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('Redis did not become ready')), 2000);
    c.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A valid stream entry id (what `Last-Event-ID` must be). */
export const isEventId = (s: string): boolean => /^\d{1,20}-\d{1,20}$/.test(s);
