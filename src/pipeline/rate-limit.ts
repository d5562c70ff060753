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
  if (limits.caller) await check(store, `toolgate:rl:caller:${sha256Hex(call.caller)}`, limits.caller, warn, `this caller is limited to ${limits.caller.requests} calls per ${limits.caller.windowSeconds} s`);
  if (limits.tool) await check(store, `toolgate:rl:tool:${sha256Hex(call.tool)}`, limits.tool, warn, `'${call.tool}' is limited to ${limits.tool.requests} calls per ${limits.tool.windowSeconds} s`);
}

async function check(store: StateStore, key: string, limit: RateLimit, warn: StageWarn | undefined, what: string): Promise<void> {
  const windowMs = limit.windowSeconds * 1000;
  const n = await failOpen(store, 'rate limit', warn, () => store.increment(key, windowMs));
  if (n === undefined || n <= limit.requests) return;
  const retryMs = (await store.ttl(key).catch(() => undefined)) ?? windowMs;
  const seconds = Math.max(1, Math.ceil(retryMs / 1000));
  throw new GatewayError('RATE_LIMITED', `rate limit reached: ${what}`, {
    retryAfterSeconds: seconds,
    modelMessage: `Too many calls: ${what}. Wait ${seconds} seconds before calling again.`,
  });
}
