/**
 * Admission: the state a call reads and writes before it runs (rate limits, the idempotency claim,
 * the loop guard), as one plan a store can apply in one step. The Redis store runs it as one Lua
 * script (one round trip, atomic); other stores apply it with their single operations in the same
 * order (src/pipeline/admit.ts).
 */

/** A fixed-window counter: INCR, its window starting with the first increment; over `limit` trips. */
export interface AdmitCounter {
  readonly key: string;
  readonly windowMs: number;
  readonly limit: number;
}

export interface AdmitPlan {
  /** Checked in order (caller, then tool); the first over its limit stops the rest. */
  readonly limits: readonly AdmitCounter[];
  /** Claimed with `value` only when absent; held by another call, its stored value is returned. */
  readonly idem?: { readonly key: string; readonly value: string; readonly ttlMs: number } | undefined;
  /** Counted only when the idempotency key was free (a replay is no repeat). */
  readonly loop?: AdmitCounter | undefined;
}

export type AdmitResult =
  | { readonly kind: 'ok' }
  /** `limits[index]` counted `count` > its limit; `retryMs` until its window ends (undefined: no TTL). */
  | { readonly kind: 'limited'; readonly index: number; readonly count: number; readonly retryMs: number | undefined }
  /** The idempotency key is held: its stored value (a claim still running, or a response). Nothing after it was counted. */
  | { readonly kind: 'held'; readonly stored: string }
  /** The loop counter tripped; the idempotency key was not claimed. */
  | { readonly kind: 'loop'; readonly count: number; readonly retryMs: number | undefined };

/**
 * KEYS: the limit keys, then the idempotency key (when ARGV[2] is '1'), then the loop key (when ARGV[3] is '1').
 * ARGV: #limits, hasIdem, hasLoop, then windowMs and limit per limit key, then the loop's windowMs
 * and limit, then the idempotency claim's value and TTL.
 * Replies { 'ok' } | { 'limited', index, count, pttl } | { 'held', stored } | { 'loop', count, pttl }.
 */
export const ADMIT_LUA = `
local function count(key, window)
  local n = redis.call('INCR', key)
  if n == 1 or redis.call('PTTL', key) < 0 then redis.call('PEXPIRE', key, window) end
  return n
end
local k, a = 1, 4
for i = 1, tonumber(ARGV[1]) do
  local n = count(KEYS[k], ARGV[a])
  if n > tonumber(ARGV[a + 1]) then return { 'limited', i - 1, n, redis.call('PTTL', KEYS[k]) } end
  k, a = k + 1, a + 2
end
local idem = false
if ARGV[2] == '1' then
  idem = KEYS[k]
  k = k + 1
  local held = redis.call('GET', idem)
  if held then return { 'held', held } end
end
if ARGV[3] == '1' then
  local n = count(KEYS[k], ARGV[a])
  if n > tonumber(ARGV[a + 1]) then return { 'loop', n, redis.call('PTTL', KEYS[k]) } end
  a = a + 2
end
if idem then redis.call('SET', idem, ARGV[a], 'PX', ARGV[a + 1]) end
return { 'ok' }`;

const ms = (x: number) => String(Math.max(1, Math.ceil(x)));

/** The script's KEYS and ARGV for a plan: [numkeys, ...keys, ...args]. */
export function admitArgs(plan: AdmitPlan): (string | number)[] {
  const keys = plan.limits.map((l) => l.key);
  const args: string[] = [String(plan.limits.length), plan.idem ? '1' : '0', plan.loop ? '1' : '0'];
  for (const l of plan.limits) args.push(ms(l.windowMs), String(l.limit));
  if (plan.idem) keys.push(plan.idem.key);
  if (plan.loop) {
    keys.push(plan.loop.key);
    args.push(ms(plan.loop.windowMs), String(plan.loop.limit));
  }
  if (plan.idem) args.push(plan.idem.value, ms(plan.idem.ttlMs));
  return [keys.length, ...keys, ...args];
}

const pttl = (x: unknown) => (typeof x === 'number' && x >= 0 ? x : undefined);

/** The script's reply as a result; anything else is an error (the store reports it as UNAVAILABLE). */
export function admitReply(reply: unknown): AdmitResult {
  if (!Array.isArray(reply)) throw new Error('unexpected admit reply');
  const [kind, a, b, c] = reply as unknown[];
  if (kind === 'ok') return { kind };
  if (kind === 'limited') return { kind, index: Number(a), count: Number(b), retryMs: pttl(c) };
  if (kind === 'held' && typeof a === 'string') return { kind, stored: a };
  if (kind === 'loop') return { kind, count: Number(a), retryMs: pttl(b) };
  throw new Error('unexpected admit reply');
}
