import { GatewayError } from '../errors.js';
import type { StateStore } from '../state/types.js';
import { sha256Hex } from '../util/hash.js';
import { failOpen, type StageWarn } from './fail-open.js';

export interface RateLimit {
  readonly requests: number;
  readonly windowSeconds: number;
}

/**
 * Stage: fixed-window rate limits, counted in the state store so every replica shares them.
 * `caller` limits one caller across all tools (config `limits.rateLimit`); `tool` limits one
 * tool across all callers (its file's `rateLimit`), protecting the upstream. Fails open while the
 * store is down, like the loop guard: a missed count cannot run anything twice.
 */
export async function checkRateLimits(
  store: StateStore,
  limits: { caller?: RateLimit | undefined; tool?: RateLimit | undefined },
  call: { caller: string; tool: string },
  warn?: StageWarn,
): Promise<void> {
  for (const c of rateCounters(limits, call)) await check(store, c, warn);
}

/** A limit as a counter in the store, with its refusal's wording. */
export interface RateCounter {
  readonly key: string;
  readonly windowMs: number;
  readonly limit: number;
  readonly what: string;
}

/** The counters a call increments, in order: the caller's, then the tool's. */
export function rateCounters(limits: { caller?: RateLimit | undefined; tool?: RateLimit | undefined }, call: { caller: string; tool: string }): RateCounter[] {
  const out: RateCounter[] = [];
  const add = (key: string, l: RateLimit, what: string) => out.push({ key, windowMs: l.windowSeconds * 1000, limit: l.requests, what });
  if (limits.caller) add(`toolgate:rl:caller:${sha256Hex(call.caller)}`, limits.caller, `this caller is limited to ${limits.caller.requests} calls per ${limits.caller.windowSeconds} s`);
  if (limits.tool) add(`toolgate:rl:tool:${sha256Hex(call.tool)}`, limits.tool, `'${call.tool}' is limited to ${limits.tool.requests} calls per ${limits.tool.windowSeconds} s`);
  return out;
}

async function check(store: StateStore, c: RateCounter, warn: StageWarn | undefined): Promise<void> {
  const n = await failOpen(store, 'rate limit', warn, () => store.increment(c.key, c.windowMs));
  if (n === undefined || n <= c.limit) return;
  throw rateLimited(c, await store.ttl(c.key).catch(() => undefined));
}

/** The refusal of a counter over its limit, `retryMs` before its window ends (undefined: a whole window). */
export function rateLimited(c: RateCounter, retryMs: number | undefined): GatewayError {
  const { what } = c;
  const seconds = Math.max(1, Math.ceil((retryMs ?? c.windowMs) / 1000));
  return new GatewayError('RATE_LIMITED', `rate limit reached: ${what}`, {
    retryAfterSeconds: seconds,
    modelMessage: `Too many calls: ${what}. Wait ${seconds} seconds before calling again.`,
  });
}
