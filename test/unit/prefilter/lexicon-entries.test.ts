import { describe, expect, it } from 'vitest';
import { entriesFromJson, entriesFromLines, smallArray } from '../../../src/prefilter/lexicon-entries.js';
import { usageFromText } from '../../../src/prefilter/lexicon-usage.js';

const lines = ['zip\tto compress', '下载\tdownload|to download', '天气\tweather', '天气预报\tweather forecast|"quoted" sense'];
const doc = JSON.stringify({ about: 'entries: "word<TAB>sense"', entries: lines, synonyms: ['a\tb:3', 'c\td:4 e:3'] });

describe('shipped dictionaries looked up in place', () => {
  it('finds every word of the JSON text as the parsed lines would, escaped senses decoded', () => {
    const inPlace = entriesFromJson(doc, 'entries');
    const parsed = entriesFromLines(lines);
    for (const w of ['下载', '天气', '天气预报', 'zip', '天', '天气预', 'zi', 'zipp', '', '下载下载']) {
      expect(inPlace.has(w)).toBe(parsed.has(w));
      expect(inPlace.get(w)).toBe(parsed.get(w));
    }
    expect(inPlace.get('天气预报')).toBe('weather forecast|"quoted" sense');
    expect(inPlace.maxWordLength).toBe(4);
    expect(smallArray(doc, 'synonyms')).toEqual(['a\tb:3', 'c\td:4 e:3']);
    expect(smallArray(doc, 'missing')).toEqual([]);
  });

  it('refuses data a binary search would silently miss in: unsorted words, a word without a tab', () => {
    expect(() => entriesFromJson(JSON.stringify({ entries: ['b\tx', 'a\ty'] }), 'entries')).toThrow(/not sorted/);
    expect(() => entriesFromJson(JSON.stringify({ entries: ['a\tx', 'a\ty'] }), 'entries')).toThrow(/not sorted/);
    expect(() => entriesFromJson(JSON.stringify({ entries: ['a'] }), 'entries')).toThrow(/without a tab/);
    expect(() => entriesFromJson(JSON.stringify({ other: [] }), 'entries')).toThrow(/not found/);
  });

  it('reads usage triples in place, and any other text as before (a later triple wins)', () => {
    const u = usageFromText('a 6 0 abandon 34 0 abashed 1 9');
    expect(u.get('abandon')).toEqual([34, 0]);
    expect(u.get('abashed')).toEqual([1, 1]);
    expect(u.has('ab')).toBe(false);
    const unsorted = usageFromText('b 1 0 a 2 9 b 3 0');
    expect(unsorted.get('b')).toEqual([3, 0]);
    expect(unsorted.get('a')).toEqual([2, 1]);
  });
});
