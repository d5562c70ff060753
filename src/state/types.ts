/**
 * Shared state behind one interface: memory on one machine, Redis across replicas.
 * Every key expires; every operation that decides something is atomic.
 */
import type { AdmitPlan, AdmitResult } from './admit.js';

export interface StateStore {
  /** Stores `value` only if `key` is absent; true when it was stored. */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
  delete(key: string): Promise<void>;
  /** Adds one to a counter; its window (TTL) starts with the first increment. Returns the new count. */
  increment(key: string, windowMs: number): Promise<number>;
  /** Set membership, for small indexes such as the pending confirmations. */
  addToSet(key: string, member: string): Promise<void>;
  removeFromSet(key: string, member: string): Promise<void>;
  members(key: string): Promise<string[]>;
  /** Milliseconds until `key` expires, or undefined when absent. */
  ttl(key: string): Promise<number | undefined>;
  /**
   * Applies a call's admission plan in one atomic step (one round trip); a store without it gets
   * the plan applied with the operations above, in the same order (src/pipeline/admit.ts).
   */
  admit?(plan: AdmitPlan): Promise<AdmitResult>;
  close(): Promise<void>;
}
