import { afterEach, describe, expect, it, vi } from 'vitest';
import { ListChangedCoalescer, SearchRate } from '../../src/mcp-server/search-limits.js';
import { MemorySearchStore } from '../../src/mcp-server/search-state.js';

describe('find_tools bounds', () => {
  afterEach(() => vi.useRealTimers());

  it('the rate: a burst, then one search per refill, each key on its own; the wait is told in whole seconds', () => {
    let now = 0;
    const rate = new SearchRate({ burst: 3, perSecond: 0.5, maxKeys: 100 }, () => now);
    expect([rate.take('a'), rate.take('a'), rate.take('a')]).toEqual([0, 0, 0]);
    expect(rate.take('a')).toBe(2);
    expect(rate.take('b')).toBe(0); // another session
    now += 2000;
    expect(rate.take('a')).toBe(0);
    expect(rate.take('a')).toBeGreaterThan(0);
  });

  it('the rate keeps at most maxKeys buckets', () => {
    const rate = new SearchRate({ burst: 1, perSecond: 1, maxKeys: 10 }, () => 0);
    for (let i = 0; i < 1000; i++) rate.take(`k${i}`);
    expect((rate as unknown as { buckets: Map<string, unknown> }).buckets.size).toBe(10);
  });

  it('list_changed: the first at once, a burst after it as one trailing notice at the interval\'s end', () => {
    vi.useFakeTimers();
    const sent: string[] = [];
    const sink = (id: string) => ({ now: () => void sent.push(`${id}:now`), later: () => void sent.push(`${id}:later`) });
    const c = new ListChangedCoalescer(250, () => Date.now());
    c.changed('s', sink('1'));
    for (let i = 2; i <= 50; i++) c.changed('s', sink(String(i)));
    expect(sent).toEqual(['1:now']);
    vi.advanceTimersByTime(249);
    expect(sent).toEqual(['1:now']);
    vi.advanceTimersByTime(1);
    expect(sent).toEqual(['1:now', '50:later']); // the latest sink
    c.changed('other', sink('o'));
    expect(sent.at(-1)).toBe('o:now'); // sessions apart
    vi.advanceTimersByTime(1000);
    c.changed('s', sink('x'));
    expect(sent.at(-1)).toBe('x:now');
    c.close();
  });

  it('the memory store: plain records, least recently used dropped past the bound, idle ones forgotten', async () => {
    let now = 0;
    const store = new MemorySearchStore({ maxEntries: 2, idleMs: 1000 }, () => now);
    await store.set('a', { tools: ['x.y'], at: 0 });
    await store.set('b', { tools: ['z'], at: 0 });
    await store.get('a');
    await store.set('c', { tools: [], at: 0 });
    expect(await store.get('b')).toBeUndefined();
    expect(JSON.parse(JSON.stringify(await store.get('a')))).toEqual({ tools: ['x.y'], at: 0 });
    now = 5000;
    expect(await store.get('a')).toBeUndefined();
    expect(store.size).toBe(1);
  });
});
