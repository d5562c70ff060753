import { GatewayError } from '../errors.js';
import type { StateStore } from '../state/types.js';
import { sha256Hex } from '../util/hash.js';

interface Stored<T> {
  state: 'running' | 'done';
  digest: string;
  response?: T;
}

/**
 * Idempotency-Key: the first call with a key runs and its success is stored for the TTL; the same
 * key from the same caller replays it without running the tool again. The same key with other
 * arguments, or while the first is still running, is a CONFLICT. A failure frees the key.
 */
export class Idempotency<T> {
  constructor(
    private readonly store: StateStore,
    private readonly ttlMs: number,
  ) {}

  /** The TTL of a claim and of a stored response. */
  get ttl(): number {
    return this.ttlMs;
  }

  key(caller: string, idemKey: string): string {
    return `toolgate:idem:${sha256Hex(`${caller}\u0000${idemKey}`)}`;
  }

  /** Claims the key, or returns the stored response to replay. */
  async begin(caller: string, idemKey: string, digest: string): Promise<{ replay: T } | undefined> {
    const key = this.key(caller, idemKey);
    if (await this.store.setIfAbsent(key, claimValue(digest), this.ttlMs)) return undefined;
    const raw = await this.store.get(key);
    if (raw === undefined) return this.begin(caller, idemKey, digest); // expired between the two steps
    return held<T>(raw, digest);
  }

  async complete(caller: string, idemKey: string, digest: string, response: T): Promise<void> {
    const done: Stored<T> = { state: 'done', digest, response };
    await this.store.set(this.key(caller, idemKey), JSON.stringify(done), this.ttlMs);
  }

  async abandon(caller: string, idemKey: string): Promise<void> {
    await this.store.delete(this.key(caller, idemKey));
  }
}

/** What a call stores when it claims a key. */
export function claimValue(digest: string): string {
  const claim: Stored<never> = { state: 'running', digest };
  return JSON.stringify(claim);
}

/** A key held when a call came: its stored response to replay, or the CONFLICT to answer. */
export function held<T>(raw: string, digest: string): { replay: T } {
  const stored = JSON.parse(raw) as Stored<T>;
  if (stored.digest !== digest) {
    throw new GatewayError('CONFLICT', 'this Idempotency-Key was used with another tool or other arguments', {
      modelMessage: 'This idempotency key was already used for a different call. Use a new key for a new call.',
    });
  }
  if (stored.state === 'running') {
    throw new GatewayError('CONFLICT', 'a call with this Idempotency-Key is still in flight', {
      retryAfterSeconds: 1,
      modelMessage: 'The same call is still running. Wait for its result instead of sending it again.',
    });
  }
  return { replay: stored.response as T };
}
