import type { Rng } from '../routing/select.js';

/** Exponential backoff with full jitter around the nominal value: base·2^(n-1)·[0.5, 1.5). */
export function backoffDelay(baseMs: number, retryNumber: number, rng: Rng): number {
  return Math.round(baseMs * 2 ** Math.max(0, retryNumber - 1) * (0.5 + rng()));
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
