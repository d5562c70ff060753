import type { Rng } from '../routing/select.js';

/** Exponential backoff with full jitter around the nominal value: base·2^(n-1)·[0.5, 1.5). */
export function backoffDelay(baseMs: number, retryNumber: number, rng: Rng): number {
  return Math.round(baseMs * 2 ** Math.max(0, retryNumber - 1) * (0.5 + rng()));
}
