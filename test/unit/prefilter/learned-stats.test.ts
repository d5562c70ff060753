import { describe, expect, it } from 'vitest';
import { PrefilterIndex } from '../../../src/prefilter/index.js';
import { learnedBoost } from '../../../src/prefilter/learn/boost.js';
import { exportFile, importTable } from '../../../src/prefilter/learn/file.js';
import { HALF_LIFE_MS, LearnedStats, MAX_TERMS_PER_TOOL, MAX_TOOLS, MIN_WEIGHT, SLACK } from '../../../src/prefilter/learn/stats.js';
import { learnTerms } from '../../../src/prefilter/learn/terms.js';

const T0 = Date.UTC(2026, 11, 1);
const tool = (name: string, description: string) => ({ name, providerName: name.replace('.', '__'), description, tags: [], examples: [], params: [] });

describe('learned term statistics', () => {
  it('keeps the analysed terms of a query, never its text', () => {
    const terms = learnTerms('Please forecast the RAINFALL for my garden party!', null);
    expect(terms).toEqual(expect.arrayContaining(['rainfal', 'garden', 'parti']));
    expect(terms).not.toContain('the');
    const s = new LearnedStats();
    s.add('weather.forecast', terms, 1, T0);
    const file = JSON.stringify(exportFile(s, T0));
    expect(file).not.toContain('RAINFALL');
    expect(file).not.toContain('garden party');
    expect(file).not.toMatch(/Please|my garden/);
  });

  it('halves a weight every half-life and drops it once it has faded', () => {
    const s = new LearnedStats();
    s.add('a.tool', ['umbrella'], 2, T0);
    expect(s.weights(T0).get('a.tool')?.get('umbrella')).toBeCloseTo(2, 6);
    expect(s.weights(T0 + HALF_LIFE_MS).get('a.tool')?.get('umbrella')).toBeCloseTo(1, 6);
    expect(s.weights(T0 + 3 * HALF_LIFE_MS).get('a.tool')?.get('umbrella')).toBeCloseTo(0.25, 6);
    // An event later counts at full weight beside the faded one.
    s.add('a.tool', ['umbrella'], 1, T0 + HALF_LIFE_MS);
    expect(s.weights(T0 + HALF_LIFE_MS).get('a.tool')?.get('umbrella')).toBeCloseTo(2, 6);
    expect(s.weights(T0 + 20 * HALF_LIFE_MS).size).toBe(0);
    expect(2 * 0.5 ** 20 < MIN_WEIGHT).toBe(true);
  });

  it('keeps at most the strongest terms per tool and a bounded number of tools', () => {
    const s = new LearnedStats();
    s.add('a.tool', ['strong'], 50, T0);
    for (let i = 0; i < 500; i++) s.add('a.tool', [`w${i}`], 1, T0);
    const terms = s.weights(T0).get('a.tool')!;
    expect(terms.size).toBeLessThanOrEqual(MAX_TERMS_PER_TOOL * SLACK);
    expect(terms.has('strong')).toBe(true);
    for (let i = 0; i < MAX_TOOLS + 50; i++) s.add(`t.${i}`, ['x'], i === 7 ? 100 : 1, T0);
    expect(s.toolCount).toBeLessThanOrEqual(MAX_TOOLS);
    expect(s.weights(T0).has('t.7')).toBe(true);
  });

  it('exports and imports the same weights; a reset forgets one tool', () => {
    const s = new LearnedStats();
    s.add('a.tool', ['rain', 'umbrella'], 1, T0);
    s.add('b.tool', ['sun'], 3, T0);
    const file = exportFile(s, T0 + HALF_LIFE_MS);
    expect(file).toMatchObject({ version: 1, tools: { 'a.tool': { rain: 0.5, umbrella: 0.5 }, 'b.tool': { sun: 1.5 } } });
    const t = new LearnedStats();
    t.replace(importTable(file, T0 + HALF_LIFE_MS));
    expect(exportFile(t, T0 + 2 * HALF_LIFE_MS).tools).toEqual({ 'a.tool': { rain: 0.25, umbrella: 0.25 }, 'b.tool': { sun: 0.75 } });
    expect(t.reset('a.tool')).toBe(true);
    expect(t.reset('a.tool')).toBe(false);
    expect(Object.keys(exportFile(t, T0).tools)).toEqual(['b.tool']);
  });

  it('lifts a tool for a word no description has, once learned, and more with more evidence', () => {
    const ix = PrefilterIndex.build(
      [tool('weather.forecast', 'Forecast of temperature and rain for the coming days.'), tool('calendar.create', 'Create a calendar event for the coming days.'), tool('notes.add', 'Add a note.')],
      { related: null },
    );
    const s = new LearnedStats();
    const boost = learnedBoost(s, () => T0);
    const q = 'should I take a brolly for the coming days';
    const before = ix.search(q, { k: 3, learned: boost });
    expect(before.map((c) => c.name)).not.toEqual(expect.arrayContaining(['notes.add']));
    s.add('notes.add', learnTerms('take a brolly', null), 1, T0);
    const once = ix.search(q, { k: 3, learned: boost }).find((c) => c.name === 'notes.add')?.score ?? 0;
    expect(once).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++) s.add('notes.add', learnTerms('brolly', null), 1, T0);
    const more = ix.search(q, { k: 3, learned: boost }).find((c) => c.name === 'notes.add')?.score ?? 0;
    expect(more).toBeGreaterThan(once);
    // Without the hook the ranking is what it was.
    expect(ix.search(q, { k: 3 })).toEqual(before);
  });

  it('scores from the statistics as they are now: every add, trim, drop, reset and import shows in the next search', () => {
    const names = Array.from({ length: 30 }, (_, i) => `t.${i}`);
    const s = new LearnedStats();
    const boost = learnedBoost(s, () => T0);
    const concept = (term: string) => ({ alternatives: [{ terms: [term], weight: 1 }] }) as never;
    /** The tools (as documents) whose learned postings a search for `term` gets, with their order. */
    const docsFor = (term: string) => [...(boost(names, [concept(term)])[0]?.alts[0]?.postings[0]?.docs ?? [])];
    /** The same from the per-tool table (the export's view). */
    const expected = (term: string) => names.flatMap((n, i) => ((s.weights(T0).get(n)?.get(term) ?? 0) >= MIN_WEIGHT ? [i] : []));
    let seed = 3;
    const rnd = (n: number) => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) >>> 8) % n;
    const terms = Array.from({ length: 200 }, (_, i) => `w${i}`);
    for (let step = 0; step < 400; step++) {
      const tool = names[rnd(10)]!; // 10 tools, 200 terms: tools go past 72 terms and are trimmed
      if (step % 97 === 96) s.reset(tool);
      else if (step === 250) s.replace(importTable({ version: 1, kind: 'toolgate.prefilter.learned', tools: { 't.3': { w1: 5 }, 't.1': { w1: 2, w2: 1 } } }, T0));
      else s.add(tool, Array.from({ length: 1 + rnd(20) }, () => terms[rnd(terms.length)]!), 1 + rnd(3), T0);
      if (step === 250) expect(docsFor('w1')).toEqual([1, 3]);
      const probe = terms[rnd(terms.length)]!;
      expect(docsFor(probe), `step ${step}, ${probe}`).toEqual(expected(probe));
    }
    // An impact grows with the tool's weight for the term, and no posting is left for a forgotten tool.
    s.replace(new Map());
    s.add('t.0', ['solo'], 1, T0);
    const one = boost(names, [concept('solo')])[0]!.alts[0]!.postings[0]!.impacts[0]!;
    s.add('t.0', ['solo'], 5, T0);
    expect(boost(names, [concept('solo')])[0]!.alts[0]!.postings[0]!.impacts[0]!).toBeGreaterThan(one);
    s.reset('t.0');
    expect(boost(names, [concept('solo')])).toEqual([]);
  });
});
