import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/state/memory.js';

describe('MemoryStore expiry', () => {
  it('sweeps expired keys a few per write: after their window, later writes drop them all and keep every live one', async () => {
    let now = 0;
    const store = new MemoryStore(() => now);
    for (let i = 0; i < 10_000; i++) await store.increment(`old:${i}`, 1_000);
    await store.set('long', 'kept', 60_000);
    expect(store.size).toBe(10_001);
    now = 2_000; // every old key has expired, 'long' has not
    for (let i = 0; i < 2_000; i++) await store.increment(`new:${i}`, 1_000);
    // one pass over ≈ 12,000 entries at 8 per write, 1 added per write: done within ≈ 1,700 writes
    expect(store.size).toBe(2_001);
    expect(await store.get('long')).toBe('kept');
    expect(await store.get('old:0')).toBeUndefined();
    expect(await store.increment('new:0', 1_000)).toBe(2);
  });

  it('keeps a steady load bounded: keys written at a steady rate stay near the live window, not all ever written', async () => {
    let now = 0;
    const store = new MemoryStore(() => now);
    let peak = 0;
    for (let i = 0; i < 50_000; i++) {
      now = i; // one write per ms, each key lives 1,000 ms: ≈ 1,000 live at any time
      await store.increment(`k:${i}`, 1_000);
      peak = Math.max(peak, store.size);
    }
    expect(peak).toBeLessThan(1_300);
  });
});
