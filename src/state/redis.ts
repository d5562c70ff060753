import type { Redis, RedisOptions } from 'ioredis';
import { GatewayError } from '../errors.js';
import type { StateStore } from './types.js';
import { ADMIT_LUA, admitArgs, admitReply, type AdmitPlan, type AdmitResult } from './admit.js';

/** INCR with a window: the first increment (or a key somehow left without TTL) starts the window. */
const INCREMENT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

/** SADD and refresh the set's TTL in one atomic step (a MULTI's queued commands would reject unhandled when the link drops). */
const ADD_TO_SET = `
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

/** The scripts, sent by EVALSHA (ioredis falls back to EVAL once on NOSCRIPT, e.g. after a Redis restart). */
type Script = (...args: (string | number)[]) => Promise<unknown>;
interface Scripted {
  tgIncrement: Script;
  tgAddToSet: Script;
  tgAdmit: Script;
}

function defineScripts(c: Redis): void {
  c.defineCommand('tgIncrement', { numberOfKeys: 1, lua: INCREMENT });
  c.defineCommand('tgAddToSet', { numberOfKeys: 1, lua: ADD_TO_SET });
  c.defineCommand('tgAdmit', { lua: ADMIT_LUA });
}

const scripts = (c: Redis) => c as unknown as Scripted;

/** Sets carry no per-member expiry: the whole set expires this long after its last addition. */
const SET_TTL_MS = 8 * 24 * 3600 * 1000;
/** How long the very first operation may wait for the first connection (startup only). */
const FIRST_CONNECT_MS = 2000;

export interface RedisStoreOptions {
  /** Told when the connection goes up or down (readiness, logs). */
  onStatus?: (up: boolean) => void;
  /** A slow Redis fails the command after this long rather than holding the call. */
  commandTimeoutMs?: number;
}

export function redisUnavailable(cause?: unknown): GatewayError {
  return new GatewayError('UNAVAILABLE', 'shared state (Redis) is unavailable', { retryAfterSeconds: 1, cause });
}

/** Fail fast, reconnect forever: commands never queue while Redis is away. */
export function redisClientOptions(commandTimeoutMs = 2000): RedisOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    commandTimeout: commandTimeoutMs,
    retryStrategy: (times: number) => Math.min(50 * times, 1000),
  };
}

/** ioredis, imported only when Redis is configured (a memory-only gateway never loads it). */
export async function connectRedis(url: string, opts: RedisOptions): Promise<Redis> {
  const mod = await import('ioredis');
  return new mod.Redis(url, opts);
}

/**
 * The shared store across replicas. Callers namespace keys (`toolgate:`); every key written here
 * expires. A failing command throws UNAVAILABLE (503) so decisions fail closed instead of
 * being taken on one replica's partial view.
 */
export class RedisStore implements StateStore {
  private readonly client: Promise<Redis>;
  /** The first connection attempt has ended (either way): from then on commands fail fast. */
  private settled = false;
  private up = false;

  constructor(url: string, private readonly opts: RedisStoreOptions = {}) {
    this.client = connectRedis(url, redisClientOptions(opts.commandTimeoutMs)).then((c) => {
      c.on('ready', () => this.status(true));
      c.on('close', () => this.status(false));
      c.on('error', () => undefined); // reported through 'close' and failed commands
      defineScripts(c);
      return c;
    });
    this.client.catch(() => undefined);
  }

  /** Connected right now (for /readyz). */
  get isUp(): boolean {
    return this.up;
  }

  private status(up: boolean): void {
    const first = !this.settled;
    this.settled = true;
    if (up === this.up && !(first && !up)) return; // a first failed connect is news too
    this.up = up;
    this.opts.onStatus?.(up);
  }

  /** Runs one command; any failure becomes UNAVAILABLE. */
  private async run<T>(fn: (c: Redis) => Promise<T>): Promise<T> {
    try {
      const c = await this.client;
      if (!this.settled && c.status !== 'ready') await firstReady(c);
      return await fn(c);
    } catch (e) {
      throw redisUnavailable(e);
    }
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    return (await this.run((c) => c.set(key, value, 'PX', ttl(ttlMs), 'NX'))) === 'OK';
  }

  async get(key: string): Promise<string | undefined> {
    return (await this.run((c) => c.get(key))) ?? undefined;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    await this.run((c) => c.set(key, value, 'PX', ttl(ttlMs)));
  }

  async delete(key: string): Promise<void> {
    await this.run((c) => c.del(key));
  }

  async increment(key: string, windowMs: number): Promise<number> {
    return Number(await this.run((c) => scripts(c).tgIncrement(key, String(ttl(windowMs)))));
  }

  async addToSet(key: string, member: string): Promise<void> {
    await this.run((c) => scripts(c).tgAddToSet(key, member, String(SET_TTL_MS)));
  }

  async removeFromSet(key: string, member: string): Promise<void> {
    await this.run((c) => c.srem(key, member));
  }

  async members(key: string): Promise<string[]> {
    return this.run((c) => c.smembers(key));
  }

  async ttl(key: string): Promise<number | undefined> {
    const ms = await this.run((c) => c.pttl(key));
    return ms < 0 ? undefined : ms;
  }

  /** Rate limits, the idempotency claim and the loop guard of one call: one script, one round trip. */
  async admit(plan: AdmitPlan): Promise<AdmitResult> {
    return this.run(async (c) => admitReply(await scripts(c).tgAdmit(...admitArgs(plan))));
  }

  async close(): Promise<void> {
    const c = await this.client.catch(() => undefined);
    if (!c) return;
    await c.quit().catch(() => c.disconnect());
  }
}

function ttl(ms: number): number {
  return Math.max(1, Math.ceil(ms));
}

/** At startup only: the first command waits (bounded) for the first connection. */
function firstReady(c: Redis): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error('Redis did not become ready')), FIRST_CONNECT_MS);
    const onReady = () => done();
    const done = (err?: Error) => {
      clearTimeout(timer);
      c.off('ready', onReady);
      if (err) reject(err);
      else resolve();
    };
    c.once('ready', onReady);
  });
}
