import { GatewayError } from '../errors.js';
import type { StateStore } from '../state/types.js';
import { sha256Hex } from '../util/hash.js';
import { failOpen, type StageWarn } from './fail-open.js';

/**
 * Stage (for calls that name a session): the same session calling the same tool with the same arguments more than `repeats`
 * times within the window is stopped, so an agent stuck in a loop stops burning the upstream.
 * It fails OPEN: with the shared store unavailable the check is skipped (logged once per
 * outage), since losing a loop counter cannot run anything twice, unlike the gated paths.
 */
export async function checkLoop(
  store: StateStore,
  limits: { loopRepeats: number; loopWindowSeconds: number },
  call: { caller: string; sessionId: string; tool: string; argsDigest: string },
  warn?: StageWarn,
): Promise<void> {
  const key = loopKey(call);
  const n = await failOpen(store, 'loop guard', warn, () => store.increment(key, limits.loopWindowSeconds * 1000));
  if (n !== undefined && n > limits.loopRepeats) throw loopDetected(limits, call.tool, n, await store.ttl(key).catch(() => undefined));
}

/** The counter of one session repeating one call. */
export function loopKey(call: { caller: string; sessionId: string; tool: string; argsDigest: string }): string {
  return `toolgate:loop:${sha256Hex(`${call.caller}\u0000${call.sessionId}\u0000${call.tool}\u0000${call.argsDigest}`)}`;
}

/** The refusal of the `n`th repeat, `retryMs` before the window ends (undefined: a whole window). */
export function loopDetected(limits: { loopWindowSeconds: number }, tool: string, n: number, retryMs: number | undefined): GatewayError {
  return new GatewayError('LOOP_DETECTED', `'${tool}' was called ${n} times with the same arguments in this session`, {
    retryAfterSeconds: (retryMs ?? limits.loopWindowSeconds * 1000) / 1000,
    modelMessage: `You have called '${tool}' with the same arguments ${n} times; the result will not change. Stop repeating this call and change your approach, or ask the user.`,
  });
}
