import { describe, expect, it } from 'vitest';
import { FuzzyVocabulary } from '../../../src/prefilter/fuzzy.js';
import { PrefilterIndex } from '../../../src/prefilter/index.js';
import { GENERAL_SPLIT_WEIGHT, splitName } from '../../../src/prefilter/names.js';
import { createRelated } from '../../../src/prefilter/related.js';
import { tool } from './fixtures.js';

// Tool names as evidence: run-together names split into words (the registry's own words first,
// then general English), and name parts that clip a longer word ("repo" for "repositories").

describe('splitting run-together names', () => {
  const english = new Set(['dice', 'roller', 'stellar', 'explorer', 'fig', 'let', 'sake', 'now', 'air', 'quality', 'forecast']);
  const isWord = (w: string): boolean => english.has(w);

  it('uses the words of the registry first', () => {
    const corpus = new Set(['air', 'quality', 'forecast']);
    const whole = { parts: ['air', 'quality', 'forecast'], weight: 1 };
    expect(splitName('airqualityforecast', corpus, null)).toEqual(whole);
    expect(splitName('airqualityforecast', corpus, isWord)).toEqual(whole);
    // A word of the registry's prose is not split.
    expect(splitName('forecast', corpus, isWord)).toBeNull();
  });

  it('falls back on general English when the registry does not use the words, at a lower weight', () => {
    const corpus = new Set<string>();
    expect(splitName('diceroller', corpus, null)).toBeNull();
    expect(splitName('diceroller', corpus, isWord)).toEqual({ parts: ['dice', 'roller'], weight: GENERAL_SPLIT_WEIGHT });
    expect(splitName('stellarexplorer', corpus, isWord)?.parts).toEqual(['stellar', 'explorer']);
    expect(GENERAL_SPLIT_WEIGHT).toBeLessThan(1);
  });

  it('takes a general-English split only when it covers every letter, with no stop word', () => {
    const corpus = new Set<string>();
    expect(splitName('figlet', corpus, isWord)).toBeNull(); // "let" is a stop word
    expect(splitName('sakenowa', corpus, isWord)).toBeNull(); // sake + now + "a": not covered
  });

  it('reads WordNet as the general vocabulary', () => {
    const rel = createRelated(['dice\th0 cube', 'roller\th0 cylinder'], 'dice 3 0');
    expect(rel.isWord('dice')).toBe(true);
    expect(rel.isWord('roller')).toBe(true);
    expect(rel.isWord('diceroller')).toBe(false);
  });
});

describe('prefilter ranking: run-together names', () => {
  // The descriptions do not use the name's words, so only the split name can match "air quality".
  const tools = [
    tool('airqualityforecast', 'Two-day outlook for any US zip code.'),
    tool('weather.current', 'Current weather conditions for a city.'),
    tool('files.read', 'Read a text file from the shared drive.'),
  ];

  it('finds a concatenated name by its words, through general English (WordNet)', () => {
    const ix = PrefilterIndex.build(tools);
    expect(ix.search('air quality', { k: 5 })[0]?.name).toBe('airqualityforecast');
    const [hit] = ix.search('air quality', { k: 1, explain: true });
    expect(hit?.why?.matched).toEqual(['air', 'quality']);
  });

  it('without general English, only the registry\'s own words split names', () => {
    const ix = PrefilterIndex.build(tools, { related: null });
    expect(ix.search('air quality', { k: 5 }).map((c) => c.name)).not.toContain('airqualityforecast');
    const own = PrefilterIndex.build([...tools, tool('air.monitor', 'Air quality index readings.')], { related: null });
    expect(own.search('air quality', { k: 5 }).map((c) => c.name)).toContain('airqualityforecast');
  });
});

describe('prefilter ranking: clipped name parts', () => {
  const tools = [
    tool('repo.trending', 'Discover popular GitHub projects.'),
    tool('news.top', 'Top headlines from around the world.'),
    tool('art.gallery', 'Paintings and sculptures from museums.'),
  ];

  it('matches a query word a name part clips ("repo" → "repositories")', () => {
    const ix = PrefilterIndex.build(tools);
    expect(ix.search('trending open-source repositories', { k: 1 })[0]?.name).toBe('repo.trending');
    const [hit] = ix.search('repositories', { k: 1, explain: true });
    expect(hit?.why?.matched).toEqual(['repositories→repo']);
  });

  it('not with name parts under four letters, nor with words of the prose', () => {
    const ix = PrefilterIndex.build(tools);
    expect(ix.search('artificial', { k: 5 })).toEqual([]); // "art" is no clipping of it
    expect(ix.search('headquarters', { k: 5 })).toEqual([]); // "headlines" is prose, not a name
  });

  it('is a fallback for real words: only name parts, never typo readings of other words', () => {
    const fuzzy = new FuzzyVocabulary(['repo', 'space', 'repositori'], new Set(['repo']));
    expect(fuzzy.near('repositories', false).map((m) => m.term)).toEqual(['repo']);
    expect(fuzzy.near('spaces', false)).toEqual([]);
    expect(fuzzy.near('spaces', true).map((m) => m.term)).toContain('space');
  });
});
