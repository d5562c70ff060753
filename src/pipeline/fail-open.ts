import { isGatewayError } from '../errors.js';
import type { StateStore } from '../state/types.js';

export type StageWarn = (msg: string, err: unknown) => void;

/** Stages currently skipped, per store: each logs once per outage, not once per call. */
const skipping = new WeakMap<StateStore, Set<string>>();

/**
 * Runs a check that only limits (the loop guard, rate limits): with the shared store unavailable
 * it is skipped rather than failing the call, since skipping one cannot run anything twice.
 * Returns undefined when skipped.
 */
export async function failOpen<T>(store: StateStore, stage: string, warn: StageWarn | undefined, fn: () => Promise<T>): Promise<T | undefined> {
  try {
    const out = await fn();
    working(store, stage);
    return out;
  } catch (e) {
    if (!isGatewayError(e) || e.code !== 'UNAVAILABLE') throw e;
    skipped(store, stage, warn, e);
    return undefined;
  }
}

/** The stage reached the store again: its next outage is logged anew. */
export function working(store: StateStore, stage: string): void {
  skipping.get(store)?.delete(stage);
}

/** The stage is skipped for the store's outage `e`: logged once per outage. */
export function skipped(store: StateStore, stage: string, warn: StageWarn | undefined, e: unknown): void {
  let set = skipping.get(store);
  if (!set) skipping.set(store, (set = new Set()));
  if (!set.has(stage)) warn?.(`${stage} skipped: shared state is unavailable`, e);
  set.add(stage);
}
