import type { IssuedToken } from './token-endpoint.js';

/** Refresh this long before a token's expiry: 10 % of its lifetime, at most 30 s. */
const MAX_MARGIN_MS = 30_000;
const MARGIN_SHARE = 0.1;
const DEFAULT_MAX_ENTRIES = 10_000;

interface Entry {
  readonly token: string;
  readonly refreshAt: number;
}

/**
 * Issued tokens by key, each kept until shortly before it expires. Concurrent requests for a key
 * that has none share one fetch; a failed fetch leaves nothing behind (the next request tries
 * again). Bounded: past `max` keys the oldest is dropped.
 */
export class TokenCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<IssuedToken>>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly max = DEFAULT_MAX_ENTRIES,
  ) {}

  /** The key's token while it is fresh (not within the refresh margin of its expiry). */
  peek(key: string): string | undefined {
    const hit = this.entries.get(key);
    return hit && this.now() < hit.refreshAt ? hit.token : undefined;
  }

  /** A new token for the key: the fetch in flight for it if there is one, else `fetch()`. */
  renew(key: string, fetch: () => Promise<IssuedToken>): Promise<IssuedToken> {
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.fetchOnce(key, fetch);
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  /** Forgets a key's token (the upstream refused it). */
  invalidate(key: string, token: string): void {
    if (this.entries.get(key)?.token === token) this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  private async fetchOnce(key: string, fetch: () => Promise<IssuedToken>): Promise<IssuedToken> {
    try {
      const issued = await fetch();
      const start = this.now();
      const margin = Math.min(MAX_MARGIN_MS, Math.max(0, issued.expiresAt - start) * MARGIN_SHARE);
      this.entries.delete(key);
      this.entries.set(key, { token: issued.accessToken, refreshAt: issued.expiresAt - margin });
      if (this.entries.size > this.max) this.evict();
      return issued;
    } finally {
      this.inFlight.delete(key);
    }
  }

  /** Drops expired entries, then the oldest ones, down to the bound. */
  private evict(): void {
    const t = this.now();
    for (const [k, e] of this.entries) if (e.refreshAt <= t) this.entries.delete(k);
    for (const k of this.entries.keys()) {
      if (this.entries.size <= this.max) break;
      this.entries.delete(k);
    }
  }
}
