/**
 * Shared state behind one interface: memory on one machine, Redis across replicas.
 * Every key expires; every operation that decides something is atomic.
 */
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
  close(): Promise<void>;
}
