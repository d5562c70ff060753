import { isGatewayError } from '../errors.js';
import type { AdmitPlan } from '../state/admit.js';
import type { StateStore } from '../state/types.js';
import { skipped, working, type StageWarn } from './fail-open.js';
import { claimValue, held, type Idempotency } from './idempotency.js';
import { checkLoop, loopDetected, loopKey } from './loop-guard.js';
import { checkRateLimits, rateCounters, rateLimited, type RateLimit } from './rate-limit.js';

/** What a call's admission checks, each part present only when it applies to this call. */
export interface Admission {
  readonly caller: string;
  readonly tool: string;
  readonly rate?: { caller?: RateLimit | undefined; tool?: RateLimit | undefined } | undefined;
  /** The Idempotency-Key: its owner (a person), the key and the call's digest. */
  readonly idem?: { owner: string; key: string; digest: string } | undefined;
  /** The loop guard: the call's session and argument digest, with the limits. */
  readonly loop?: { sessionId: string; argsDigest: string; loopRepeats: number; loopWindowSeconds: number } | undefined;
}

/**
 * Stage: rate limits → idempotency claim → loop guard, the state a call reads and writes before it
 * runs. A store with `admit` (Redis) takes them as one plan: one round trip, atomic. Otherwise they
 * run one by one. Either way: rate limits and the loop guard fail open while the store is down, the
 * idempotency claim fails closed (UNAVAILABLE); a refusal leaves no claim behind; a held key
 * answers its replay (or CONFLICT) and the loop guard does not count it.
 * Returns the replay, or undefined when the call goes on (holding its key, if it has one).
 */
export async function admit<T>(store: StateStore, idempotency: Idempotency<T>, a: Admission, warn?: StageWarn): Promise<{ replay: T } | undefined> {
  if (!store.admit) return admitStepwise(store, idempotency, a, warn);
  const limits = a.rate ? rateCounters(a.rate, a) : [];
  const loop = a.loop ? { key: loopKey({ caller: a.caller, sessionId: a.loop.sessionId, tool: a.tool, argsDigest: a.loop.argsDigest }), windowMs: a.loop.loopWindowSeconds * 1000, limit: a.loop.loopRepeats } : undefined;
  const idem = a.idem ? { key: idempotency.key(a.idem.owner, a.idem.key), value: claimValue(a.idem.digest), ttlMs: idempotency.ttl } : undefined;
  const plan: AdmitPlan = { limits, idem, loop };
  let out;
  try {
    out = await store.admit(plan);
  } catch (e) {
    if (!isGatewayError(e) || e.code !== 'UNAVAILABLE') throw e;
    if (limits.length > 0) skipped(store, 'rate limit', warn, e);
    if (a.idem) throw e;
    if (loop) skipped(store, 'loop guard', warn, e);
    return undefined;
  }
  if (limits.length > 0) working(store, 'rate limit');
  if (loop) working(store, 'loop guard');
  switch (out.kind) {
    case 'ok':
      return undefined;
    case 'limited':
      throw rateLimited(limits[out.index] ?? limits[0]!, out.retryMs);
    case 'held':
      return held<T>(out.stored, a.idem!.digest);
    case 'loop':
      throw loopDetected(a.loop!, a.tool, out.count, out.retryMs);
  }
}

/** The same checks with the store's single operations, in the same order. */
async function admitStepwise<T>(store: StateStore, idempotency: Idempotency<T>, a: Admission, warn?: StageWarn): Promise<{ replay: T } | undefined> {
  if (a.rate) await checkRateLimits(store, a.rate, a, warn);
  if (a.idem) {
    const prior = await idempotency.begin(a.idem.owner, a.idem.key, a.idem.digest);
    if (prior) return prior;
  }
  if (!a.loop) return undefined;
  try {
    await checkLoop(store, a.loop, { caller: a.caller, sessionId: a.loop.sessionId, tool: a.tool, argsDigest: a.loop.argsDigest }, warn);
  } catch (e) {
    if (a.idem) await idempotency.abandon(a.idem.owner, a.idem.key).catch(() => undefined);
    throw e;
  }
  return undefined;
}
