import { describe, expect, it } from 'vitest';
import { ResultCache } from '../../src/cache/result-cache.js';
import { MemoryStore } from '../../src/state/memory.js';
import type { StateStore } from '../../src/state/types.js';
import type { ToolResult } from '../../src/adapters/types.js';

const text = (t: string): ToolResult => ({ content: [{ type: 'text', text: t }], isError: false });

describe('ResultCache', () => {
  it('a store that fails is a miss and a skipped write, never an error', async () => {
    const broken = new MemoryStore();
    const fail = () => Promise.reject(new Error('redis down'));
    const store: StateStore = Object.assign(broken, { get: fail, set: fail });
    const warnings: string[] = [];
    const cache = new ResultCache(store, { onWarning: (m) => warnings.push(m) });
    await expect(cache.put('t', { a: 1 }, text('x'), 60_000)).resolves.toBeUndefined();
    await expect(cache.get('t', { a: 1 })).resolves.toBeUndefined();
    expect(warnings).toHaveLength(2);
  });

  it('keeps at most maxEntries entries, evicting the least recently used', async () => {
    const cache = new ResultCache(new MemoryStore(), { maxEntries: 2 });
    await cache.put('t', { n: 1 }, text('1'), 60_000);
    await cache.put('t', { n: 2 }, text('2'), 60_000);
    await cache.get('t', { n: 1 }); // 1 is now more recent than 2
    await cache.put('t', { n: 3 }, text('3'), 60_000);
    expect(await cache.get('t', { n: 2 })).toBeUndefined();
    expect((await cache.get('t', { n: 1 }))?.result).toEqual(text('1'));
    expect((await cache.get('t', { n: 3 }))?.result).toEqual(text('3'));
  });

  it('does not keep results over the size bound, nor error results', async () => {
    const cache = new ResultCache(new MemoryStore(), { maxBytes: 100 });
    await cache.put('t', { big: true }, text('x'.repeat(200)), 60_000);
    await cache.put('t', { err: true }, { ...text('failed'), isError: true }, 60_000);
    expect(await cache.get('t', { big: true })).toBeUndefined();
    expect(await cache.get('t', { err: true })).toBeUndefined();
  });

  it('the same arguments in another key order are the same entry', async () => {
    const cache = new ResultCache(new MemoryStore());
    await cache.put('t', { a: 1, b: 2 }, text('ab'), 60_000);
    expect((await cache.get('t', { b: 2, a: 1 }))?.result).toEqual(text('ab'));
    expect(await cache.get('other', { a: 1, b: 2 })).toBeUndefined();
  });
});
