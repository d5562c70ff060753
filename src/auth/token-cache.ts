import type { Caller } from './caller.js';

interface Entry {
  readonly caller: Caller;
  /** Epoch ms after which the entry is not used. */
  readonly until: number;
}

/**
 * Verified tokens by the sha256 of the token: a repeat call costs the hash (made anyway for the
 * key lookup) and one map lookup. Only successes are stored, each until the token's exp or
 * `maxAgeMs`, whichever is sooner; at `maxEntries` the oldest entry goes.
 */
export class TokenCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly maxEntries = 10_000,
    private readonly maxAgeMs = 300_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(digest: string): Caller | undefined {
    const e = this.entries.get(digest);
    if (e === undefined) return undefined;
    if (e.until > this.now()) return e.caller;
    this.entries.delete(digest);
    return undefined;
  }

  set(digest: string, caller: Caller): void {
    const now = this.now();
    const exp = caller.identity?.expiresAt;
    const until = Math.min(now + this.maxAgeMs, exp ? exp * 1000 : Number.POSITIVE_INFINITY);
    if (until <= now) return;
    this.entries.delete(digest);
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
    this.entries.set(digest, { caller, until });
  }

  get size(): number {
    return this.entries.size;
  }
}
