import { describe, expect, it } from 'vitest';
import { queryConcepts } from '../../../src/prefilter/analyze.js';
import { PrefilterIndex } from '../../../src/prefilter/index.js';
import { baseForms, createRelated, loadRelated } from '../../../src/prefilter/related.js';
import { tool } from './fixtures.js';

// English word knowledge (WordNet-derived): related words as weaker readings of a query word,
// priors that make general words count less, and the feedback pass.

const rel = loadRelated();
const readings = (word: string): string[] => rel.related(word).map((a) => a.terms.join(' '));

describe('related terms data', () => {
  it('gives synonyms, derived forms and pertainyms of the usual senses', () => {
    expect(readings('picture')).toContain('imag'); // synonym (stemmed)
    expect(readings('photograph')).toContain('pictur');
    expect(readings('decide')).toContain('decis'); // derivation Porter cannot see: decid / decis
    expect(readings('describe')).toContain('descript');
    expect(readings('financial')).toContain('financ'); // pertainym: "financial" stems to "financi"
    expect(readings('automobile')).toContain('car');
  });

  it('reads inflected words through their dictionary form', () => {
    expect(baseForms('stopped')).toContain('stop');
    expect(baseForms('flies')).toContain('fly');
    expect(readings('pictures')).toEqual(readings('picture'));
  });

  it('weights related readings below the word, the most frequent sense first', () => {
    for (const w of ['picture', 'film', 'buy']) {
      const weights = rel.related(w).map((a) => a.weight);
      expect(weights.length).toBeGreaterThan(0);
      expect(Math.max(...weights)).toBeLessThan(1);
      expect(weights).toEqual([...weights].sort((a, b) => b - a));
    }
  });

  it('gives topical words a higher prior than general words and modifiers', () => {
    expect(rel.prior('weather')).toBeGreaterThan(rel.prior('find'));
    expect(rel.prior('recipe')).toBeGreaterThan(rel.prior('detailed'));
    expect(rel.prior('recipe')).toBe(1); // rare in general English: no damping
    expect(rel.prior('visually')).toBeLessThan(0.6);
  });

  it('knows nothing of words it has no data for', () => {
    expect(rel.related('zzqx')).toEqual([]);
    expect(rel.frequency('zzqx')).toBe(0);
    expect(rel.prior('zzqx')).toBe(1);
  });
});

describe('query expansion with related terms', () => {
  // A hand-built table, so the ranking tests do not depend on WordNet's particulars.
  const tiny = createRelated(['photo\ts0 picture|h0 representation', 'purchase\ts0 buy|t0 commerce'], 'find 700 0 detailed 26 9');

  it('finds a tool through a synonym when no tool uses the query word', () => {
    const ix = PrefilterIndex.build(
      [tool('images.edit', 'Edit a picture: crop, resize, blur.'), tool('notes.add', 'Add a note to the notebook.')],
      { related: tiny },
    );
    expect(ix.search('photo', { k: 5 }).map((c) => c.name)).toEqual(['images.edit']);
    const [hit] = ix.search('photo', { k: 1, explain: true });
    expect(hit?.why?.matched).toEqual(['photo→pictur']);
    // Without the related terms, nothing matches.
    expect(PrefilterIndex.build([tool('images.edit', 'Edit a picture.')], { related: null }).search('photo', { k: 5 })).toEqual([]);
  });

  it('never ranks a synonym above the word itself, even a rarer synonym', () => {
    // "photo" is common here (low IDF) and "picture" rare (high IDF): uncapped, the one tool
    // saying "picture" would outscore the four saying "photo".
    const tools = [
      tool('a.photo', 'Crop a photo to a square.'),
      tool('b.photo', 'Blur the faces in a photo.'),
      tool('c.photo', 'Resize a photo for the web.'),
      tool('d.photo', 'Rotate a photo upright.'),
      tool('e.picture', 'Frame a picture nicely.'),
      tool('f.other', 'Convert units of length.'),
    ];
    const ix = PrefilterIndex.build(tools, { related: tiny, feedback: false });
    const names = ix.search('photo', { k: 6 }).map((c) => c.name);
    expect(names.slice(0, 4).sort()).toEqual(['a.photo', 'b.photo', 'c.photo', 'd.photo']);
    expect(names[4]).toBe('e.picture');
  });

  it('counts general words and modifiers less than topical words', () => {
    const concepts = queryConcepts('find detailed photo', null, tiny);
    const weight = (label: string): number => concepts.find((c) => c.label === label)?.alternatives[0]?.weight ?? 0;
    expect(weight('photo')).toBe(1);
    expect(weight('find')).toBeLessThan(0.7);
    expect(weight('detailed')).toBeLessThan(weight('find'));
  });

  it('counts a word said again a little more', () => {
    const once = queryConcepts('photo album', null, null).find((c) => c.label === 'photo');
    const twice = queryConcepts('photo album, the photo', null, null).find((c) => c.label === 'photo');
    expect(twice?.alternatives[0]?.weight).toBeGreaterThan(once?.alternatives[0]?.weight ?? 1);
  });

  it('does not read a real word as a typo of another ("spices" is not "space")', () => {
    const ix = PrefilterIndex.build([tool('space.images', 'Images of outer space from NASA.'), tool('weather.now', 'Current weather.')]);
    expect(ix.search('spices', { k: 5 })).toEqual([]);
    expect(ix.search('wether', { k: 1 })[0]?.name).toBe('weather.now'); // a typo still is
  });
});

describe('pseudo-relevance feedback', () => {
  const tools = [
    tool('weather.forecast', 'Weather forecast: temperature, rain, wind and humidity for the week.'),
    tool('climate.readings', 'Temperature, rain, wind and humidity readings from local stations.'),
    tool('files.delete', 'Delete a file from the drive.'),
  ];

  it('lifts a tool that says what the best match says, in its own words', () => {
    const names = (feedback: boolean): string[] =>
      PrefilterIndex.build(tools, { related: null, feedback }).search('weather forecast', { k: 5 }).map((c) => c.name);
    expect(names(false)).toEqual(['weather.forecast']);
    expect(names(true)).toEqual(['weather.forecast', 'climate.readings']);
  });
});
