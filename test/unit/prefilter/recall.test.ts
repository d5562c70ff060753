import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PrefilterIndex } from '../../../src/prefilter/index.js';
import { createLexicon } from '../../../src/prefilter/lexicon.js';
import type { PrefilterTool } from '../../../src/prefilter/types.js';

// Cross-lingual quality floors on our own query sets (see test/fixtures/prefilter/README.md).
// Each floor sits a little below what the ranker measured when it was set, so a regression of a
// handful of queries fails the test.

const fixture = (file: string): URL => new URL(`../../fixtures/prefilter/${file}`, import.meta.url);
function jsonl<T>(file: string): T[] {
  return readFileSync(fixture(file), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}

interface DevTool { id: string; description: string }
interface Query { query: string; gold: string[] }

const devTools = jsonl<DevTool>('metatool-tools.jsonl');
const zhDescriptions = new Map(jsonl<{ id: string; description: string }>('zh-tools.jsonl').map((t) => [t.id, t.description]));

/**
 * A dev tool as a registry entry (as bench/prefilter.mjs loads it: snake-case name, the original
 * id as an alias); `zh` swaps in its Chinese description and an opaque name.
 */
function entry(t: DevTool, i: number, zh = false): PrefilterTool {
  if (zh) return { name: `tool_${i}`, providerName: `tool_${i}`, description: zhDescriptions.get(t.id) ?? '', tags: [], examples: [], params: [] };
  const name = t.id.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().replace(/[^a-z0-9_-]+/g, '_');
  return { name, providerName: name, aliases: name === t.id ? [] : [t.id], description: t.description, tags: [], examples: [], params: [] };
}

function recallAt5(index: PrefilterIndex, queries: readonly Query[], nameOf: (id: string) => string): number {
  let found = 0;
  for (const q of queries) {
    const names = index.search(q.query, { k: 5 }).map((c) => c.name);
    if (q.gold.some((g) => names.includes(nameOf(g)))) found++;
  }
  return found / queries.length;
}

const englishNames = new Map(devTools.map((t, i) => [t.id, entry(t, i).name]));
const englishIndex = PrefilterIndex.build(devTools.map((t, i) => entry(t, i)));

describe('prefilter recall floors', () => {
  const zhQueries = jsonl<Query>('zh-queries.jsonl');

  it('has a Chinese query set of 50+ queries with known gold tools', () => {
    expect(zhQueries.length).toBeGreaterThanOrEqual(50);
    for (const q of zhQueries) for (const g of q.gold) expect(englishNames.has(g)).toBe(true);
  });

  it('Chinese queries find English-only tools (measured 0.97)', () => {
    expect(recallAt5(englishIndex, zhQueries, (g) => englishNames.get(g) ?? g)).toBeGreaterThanOrEqual(0.9);
  });

  it('the dictionary alone, without the hand-made term table, still bridges (measured 0.93)', () => {
    const data = JSON.parse(readFileSync(new URL('../../../src/prefilter/assets/zh-en.json', import.meta.url), 'utf8')) as {
      entries: string[]; t2s: string; synonyms: string[];
    };
    const lexicon = createLexicon(data.entries, {}, data.t2s, data.synonyms);
    const index = PrefilterIndex.build(devTools.map((t, i) => entry(t, i)), { lexicon });
    expect(recallAt5(index, zhQueries, (g) => englishNames.get(g) ?? g)).toBeGreaterThanOrEqual(0.85);
  });

  it('English queries find tools described only in Chinese (measured 0.95)', () => {
    const enQueries = jsonl<Query>('en-queries.jsonl');
    const mixedNames = new Map(devTools.map((t, i) => [t.id, entry(t, i, zhDescriptions.has(t.id)).name]));
    const mixed = PrefilterIndex.build(devTools.map((t, i) => entry(t, i, zhDescriptions.has(t.id))));
    expect(recallAt5(mixed, enQueries, (g) => mixedNames.get(g) ?? g)).toBeGreaterThanOrEqual(0.85);
  });

  it('the Chinese bridge is what finds them: without it, recall collapses', () => {
    const plain = PrefilterIndex.build(devTools.map((t, i) => entry(t, i)), { lexicon: null });
    expect(recallAt5(plain, zhQueries, (g) => englishNames.get(g) ?? g)).toBeLessThan(0.3);
  });
});
