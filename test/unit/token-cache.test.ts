import { describe, expect, it } from 'vitest';
import { TokenCache } from '../../src/auth/upstream/cache.js';
import type { IssuedToken } from '../../src/auth/upstream/token-endpoint.js';

/** The upstream token cache on an injected clock: refresh margin, one fetch at a time, failures not kept, a bound. */
describe('token cache', () => {
  const issued = (accessToken: string, expiresAt: number): IssuedToken => ({ accessToken, expiresAt, issuedTokenType: undefined });

  it('keeps a token until 10 % of its lifetime (at most 30 s) before expiry', async () => {
    let now = 0;
    const cache = new TokenCache(() => now);
    await cache.renew('k', async () => issued('t1', 100_000)); // 100 s: renewed 10 s early
    now = 89_999;
    expect(cache.peek('k')).toBe('t1');
    now = 90_000;
    expect(cache.peek('k')).toBeUndefined();
    now = 0;
    await cache.renew('h', async () => issued('t2', 3_600_000)); // an hour: 30 s early, not 6 min
    now = 3_569_999;
    expect(cache.peek('h')).toBe('t2');
    now = 3_570_000;
    expect(cache.peek('h')).toBeUndefined();
  });

  it('shares one fetch among concurrent renewals; a failed fetch leaves nothing, and the next renewal fetches again', async () => {
    const cache = new TokenCache(() => 0);
    let fetches = 0;
    let fail = true;
    const fetch = async () => {
      fetches++;
      await new Promise((r) => setTimeout(r, 20));
      if (fail) throw new Error('down');
      return issued(`t${fetches}`, 60_000);
    };
    const all = await Promise.allSettled(Array.from({ length: 5 }, () => cache.renew('k', fetch)));
    expect(all.every((r) => r.status === 'rejected')).toBe(true);
    expect(fetches).toBe(1);
    expect(cache.peek('k')).toBeUndefined();
    fail = false;
    const ok = await Promise.all(Array.from({ length: 5 }, () => cache.renew('k', fetch)));
    expect(new Set(ok.map((t) => t.accessToken))).toEqual(new Set(['t2']));
    expect(fetches).toBe(2);
    expect(cache.peek('k')).toBe('t2');
  });

  it('forgets a refused token only if it is still the one held, and stays within its bound', async () => {
    const cache = new TokenCache(() => 0, 3);
    await cache.renew('k', async () => issued('new', 60_000));
    cache.invalidate('k', 'old');
    expect(cache.peek('k')).toBe('new');
    cache.invalidate('k', 'new');
    expect(cache.peek('k')).toBeUndefined();
    for (const k of ['a', 'b', 'c', 'd', 'e']) await cache.renew(k, async () => issued(k, 60_000));
    expect(cache.size).toBe(3);
    expect(['a', 'b', 'c', 'd', 'e'].map((k) => cache.peek(k))).toEqual([undefined, undefined, 'c', 'd', 'e']);
  });
});
