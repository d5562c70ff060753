import type { NameSplit } from './analyze.js';
import { isStopWord } from './english.js';

// Tool names: finding a tool the query names outright, and splitting names into words.

const IDENT = /[a-z0-9_]/;

function isIdentChar(ch: string | undefined): boolean {
  return ch !== undefined && IDENT.test(ch);
}

/**
 * A plain word ("now", "Search", "calculator") is not a name anyone can "write out": it is how
 * people talk. Such names still match as words through the index; only identifier-shaped names
 * (weather.current, weather__current, sendMail, gpt4) and non-Latin names count as named.
 */
function isPlainWord(name: string): boolean {
  return /^[A-Za-z][a-z]*$/.test(name);
}

/**
 * Finds names (canonical, provider, aliases) written out in a query, case-insensitively and on
 * word boundaries: "weather.current" in "use weather.current." but not in "myweather.currents".
 */
export class NameMatcher {
  // Keyed by the first two characters, so a 10 KB query costs one map lookup per position.
  private readonly byPrefix = new Map<string, { text: string; doc: number }[]>();

  constructor(names: readonly (readonly string[])[]) {
    names.forEach((list, doc) => {
      const seen = new Set<string>();
      for (const raw of list) {
        const text = raw.trim().toLowerCase();
        if (text.length < 2 || isPlainWord(raw.trim())) continue;
        if (seen.has(text)) continue; // name and provider name are often the same
        seen.add(text);
        const key = text.slice(0, 2);
        const bucket = this.byPrefix.get(key);
        if (bucket) bucket.push({ text, doc });
        else this.byPrefix.set(key, [{ text, doc }]);
      }
    });
  }

  /** Documents named in the query, in order of first mention. */
  match(query: string): number[] {
    const q = query.toLowerCase();
    const found: number[] = [];
    const seen = new Set<number>();
    const add = (doc: number): void => {
      if (!seen.has(doc)) {
        seen.add(doc);
        found.push(doc);
      }
    };
    for (let i = 0; i < q.length; i++) {
      const first = q[i] as string;
      // Left boundary: not inside an identifier ("xfiles.read", "my.files.read").
      const prev = q[i - 1];
      if (isIdentChar(first) && (isIdentChar(prev) || ((prev === '.' || prev === '-') && isIdentChar(q[i - 2])))) continue;
      const bucket = this.byPrefix.get(q.slice(i, i + 2));
      if (!bucket) continue;
      for (const { text, doc } of bucket) {
        if (!q.startsWith(text, i)) continue;
        const end = i + text.length;
        const last = text[text.length - 1];
        // Right boundary: an identifier may not run on ("weather.current.v2", "weather_currently").
        const next = q[end];
        const runsOn = isIdentChar(last) && (isIdentChar(next) || ((next === '.' || next === '-') && isIdentChar(q[end + 1])));
        if (!runsOn) add(doc);
      }
    }
    return found;
  }
}

/**
 * Splits a run-together lower-case word ("airqualityforecast") into known words, by dynamic
 * programming over the corpus vocabulary: fewest characters left uncovered by known words of
 * 3+ letters, then fewest words. Returns null unless at least two known words are found.
 */
export function splitCompound(word: string, known: { has(word: string): boolean }): string[] | null {
  const n = word.length;
  if (n < 6 || n > 40) return null;
  const uncovered = new Int32Array(n + 1);
  const pieces = new Int32Array(n + 1);
  const from = new Int32Array(n + 1); // start of the known word ending at j, or -1: char j-1 uncovered
  for (let j = 1; j <= n; j++) {
    uncovered[j] = (uncovered[j - 1] as number) + 1;
    pieces[j] = pieces[j - 1] as number;
    from[j] = -1;
    for (let i = Math.max(0, j - 20); i <= j - 3; i++) {
      if (!known.has(word.slice(i, j))) continue;
      const u = uncovered[i] as number;
      const p = (pieces[i] as number) + 1;
      if (u < (uncovered[j] as number) || (u === uncovered[j] && p < (pieces[j] as number))) {
        uncovered[j] = u;
        pieces[j] = p;
        from[j] = i;
      }
    }
  }
  const out: string[] = [];
  let knownCount = 0;
  let pending = '';
  for (let j = n; j > 0; ) {
    const i = from[j] as number;
    if (i < 0) {
      pending = word[j - 1] + pending;
      j--;
      continue;
    }
    if (pending) out.push(pending);
    pending = '';
    out.push(word.slice(i, j));
    knownCount++;
    j = i;
  }
  if (pending) out.push(pending);
  return knownCount >= 2 ? out.reverse() : null;
}

/**
 * How much a part of a name split by general English counts against a plain word: such a split is
 * a guess ("hacktrack" may or may not be about tracking; "timeport" is a game, not a clock), so
 * the whole word keeps the rest. The part still finds a tool nothing else matches ("air quality"
 * for "airqualityforecast" described only as "two-day outlook"). On the MetaTool dev set 0.1 to
 * 0.5 score the same; from 0.3 up, such parts start to outrank better tools in cross-lingual checks.
 */
export const GENERAL_SPLIT_WEIGHT = 0.1;

/**
 * Splits a run-together name word into words: first by the registry's own vocabulary (the words
 * of the tools' prose, which say what this registry is about), and when that leaves letters
 * uncovered, by general English (`isWord`, e.g. WordNet's lemmas), accepted only if every letter
 * is covered by words of 3+ letters and none of those is a stop word ("diceroller" → dice roller,
 * "stellarexplorer" → stellar explorer; "figlet" is not fig + let, "sakenowa" stays whole). A
 * general-English split counts GENERAL_SPLIT_WEIGHT. A name word that is itself an English word
 * keeps the registry split or none.
 */
export function splitName(word: string, corpus: ReadonlySet<string>, isWord: ((w: string) => boolean) | null): NameSplit | null {
  if (corpus.has(word)) return null;
  const own = splitCompound(word, corpus);
  const ownSplit = own ? { parts: own, weight: 1 } : null;
  if (!isWord || (own && own.every((p) => corpus.has(p))) || isWord(word)) return ownSplit;
  const known = (w: string): boolean => corpus.has(w) || (w.length >= 3 && !isStopWord(w) && isWord(w));
  const general = splitCompound(word, { has: known });
  return general && general.every(known) ? { parts: general, weight: GENERAL_SPLIT_WEIGHT } : ownSplit;
}
