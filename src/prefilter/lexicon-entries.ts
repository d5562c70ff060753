/**
 * The shipped dictionaries (zh-en.json, en-related.json) kept compact: the file's JSON text stays
 * one string, and an entry "word<TAB>value" of one of its string arrays is found by binary search
 * over the entries' offsets (the arrays are written sorted by word). Parsing the arrays into
 * strings and Maps cost ~33 MB of heap and ~70 MB of RSS; the text and offsets cost ~12 MB.
 */

/** Word → the rest of its line, for the lexicon and related-terms lookups. */
export interface Entries {
  has(word: string): boolean;
  /** The text after the word's tab, or undefined. */
  get(word: string): string | undefined;
  /** The longest word, in UTF-16 code units. */
  readonly maxWordLength: number;
}

/** Entries from in-memory lines (tests, small data): a later line for a word replaces an earlier one. */
export function entriesFromLines(lines: readonly string[]): Entries {
  const map = new Map<string, string>();
  let maxWordLength = 0;
  for (const line of lines) {
    const tab = line.indexOf('\t');
    const word = tab < 0 ? line : line.slice(0, tab);
    map.set(word, tab < 0 ? '' : line.slice(tab + 1));
    maxWordLength = Math.max(maxWordLength, word.length);
  }
  return { has: (w) => map.has(w), get: (w) => map.get(w), maxWordLength };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Compares text[from, to) with `word` by UTF-16 code units, as JavaScript's `<` does. */
function compareAt(text: string, from: number, to: number, word: string): number {
  const n = Math.min(to - from, word.length);
  for (let i = 0; i < n; i++) {
    const d = text.charCodeAt(from + i) - word.charCodeAt(i);
    if (d !== 0) return d;
  }
  return to - from - word.length;
}

/** Compares text[a, aEnd) with text[b, bEnd) by UTF-16 code units. */
function compareRanges(text: string, a: number, aEnd: number, b: number, bEnd: number): number {
  const n = Math.min(aEnd - a, bEnd - b);
  for (let i = 0; i < n; i++) {
    const d = text.charCodeAt(a + i) - text.charCodeAt(b + i);
    if (d !== 0) return d;
  }
  return aEnd - a - (bEnd - b);
}

/** Where the top-level field `"name":` of a JSON object text starts its value, or -1. */
export function fieldValueAt(text: string, name: string): number {
  const key = `"${name}":`;
  for (let at = text.indexOf(key); at >= 0; at = text.indexOf(key, at + 1)) {
    const before = text.charCodeAt(at - 1);
    if (before === 0x7b || before === 0x2c) return at + key.length; // after "{" or ","
  }
  return -1;
}

/** Where the JSON string literal starting at `at` (its opening quote) ends, after its closing quote. */
function stringEnd(text: string, at: number): number {
  let j = at + 1;
  while (text.charCodeAt(j) !== QUOTE) {
    if (j >= text.length) throw new Error(`prefilter: unterminated string at ${at}`);
    j += text.charCodeAt(j) === BACKSLASH ? 2 : 1;
  }
  return j + 1;
}

/** The JSON string literal starting at `at` (its opening quote), decoded. */
export function stringAt(text: string, at: number): string {
  return JSON.parse(text.slice(at, stringEnd(text, at))) as string;
}

/** The (small) string array of the top-level field `name`, parsed; [] when the field is absent. */
export function smallArray(text: string, name: string): string[] {
  const at = fieldValueAt(text, name);
  if (at < 0) return [];
  let i = at + 1;
  while (text.charCodeAt(i) === QUOTE) {
    i = stringEnd(text, i);
    if (text.charCodeAt(i) === 0x2c) i++;
  }
  return JSON.parse(text.slice(at, i + 1)) as string[];
}

class JsonEntries implements Entries {
  constructor(
    private readonly text: string,
    /** Per entry: where its word starts (after the opening quote). */
    private readonly starts: Uint32Array,
    /** Per entry: where its word ends (at the backslash of its "\t"). */
    private readonly wordEnds: Uint32Array,
    /** Per entry: where its closing quote is. */
    private readonly ends: Uint32Array,
    readonly maxWordLength: number,
  ) {}

  private find(word: string): number {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareAt(this.text, this.starts[mid] as number, this.wordEnds[mid] as number, word);
      if (c === 0) return mid;
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  has(word: string): boolean {
    return this.find(word) >= 0;
  }

  get(word: string): string | undefined {
    const i = this.find(word);
    if (i < 0) return undefined;
    const raw = this.text.slice((this.wordEnds[i] as number) + 2, this.ends[i] as number);
    return raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
  }
}

function grow(a: Uint32Array<ArrayBuffer>): Uint32Array<ArrayBuffer> {
  const b = new Uint32Array(a.length * 2);
  b.set(a);
  return b;
}

/**
 * The string array `field` of a JSON object text, as entries "word\tvalue" looked up in place.
 * The words must be plain (no JSON escapes) and strictly ascending by code units, as the build
 * scripts write them; anything else throws, so a lookup can never silently miss.
 */
export function entriesFromJson(text: string, field: string): Entries {
  const bad = (why: string): Error => new Error(`prefilter: "${field}" array ${why}; rebuild the data files (scripts/build-*.mjs)`);
  let i = fieldValueAt(text, field);
  if (i < 0 || text.charCodeAt(i) !== 0x5b) throw bad('not found');
  i++;
  let starts = new Uint32Array(1024);
  let wordEnds = new Uint32Array(1024);
  let ends = new Uint32Array(1024);
  let n = 0;
  let maxWordLength = 0;
  while (text.charCodeAt(i) !== 0x5d) {
    if (text.charCodeAt(i) !== QUOTE) throw bad(`has a non-string at ${i}`);
    const start = i + 1;
    let wordEnd = -1;
    let j = start;
    for (;;) {
      const c = text.charCodeAt(j);
      if (c === QUOTE) break;
      if (c === BACKSLASH) {
        if (wordEnd < 0) {
          if (text.charCodeAt(j + 1) !== 0x74) throw bad(`has an escaped character in a word at ${j}`);
          wordEnd = j;
        }
        j += 2;
      } else if (Number.isNaN(c)) {
        throw bad('is not closed');
      } else {
        j++;
      }
    }
    if (wordEnd < 0) throw bad(`has an entry without a tab at ${start}`);
    if (n > 0 && compareRanges(text, starts[n - 1] as number, wordEnds[n - 1] as number, start, wordEnd) >= 0) {
      throw bad(`is not sorted by word at ${start}`);
    }
    if (n === starts.length) {
      starts = grow(starts);
      wordEnds = grow(wordEnds);
      ends = grow(ends);
    }
    starts[n] = start;
    wordEnds[n] = wordEnd;
    ends[n] = j;
    n++;
    maxWordLength = Math.max(maxWordLength, wordEnd - start);
    i = j + 1;
    if (text.charCodeAt(i) === 0x2c) i++;
  }
  return new JsonEntries(text, starts.slice(0, n), wordEnds.slice(0, n), ends.slice(0, n), maxWordLength);
}
