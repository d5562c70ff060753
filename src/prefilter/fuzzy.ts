// Typo fallback: a query term the index has never seen is matched to index terms within a
// small edit distance ("wether" → "weather", "calender" → "calendar"). Trigrams find candidates;
// the edit distance decides, so short unrelated words ("recent", "rent") stay apart. A word
// also matches its longer forms ("crypto" → "cryptocurrency").

const MIN_LENGTH = 4;
const MIN_DICE = 0.4;
const MAX_MATCHES = 3;
/**
 * A name part may be a clipped word ("repo" for repository, "calc" for calculator, "docs"): it
 * matches a query word it begins, down to this share of the word's length (other terms: half).
 */
const CLIPPED_MIN_SHARE = 0.3;

/** Edits allowed: one for short words, two from eight letters on. */
function maxEdits(length: number): number {
  return length >= 8 ? 2 : 1;
}

/** Optimal string alignment distance (Levenshtein plus adjacent transposition), capped. */
export function editDistance(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) > cap) return cap + 1;
  let prev2 = new Int32Array(b.length + 1);
  let prev = Int32Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = new Int32Array(b.length + 1);
    cur[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, (prev2[j - 2] as number) + 1);
      cur[j] = v;
      rowMin = Math.min(rowMin, v);
    }
    if (rowMin > cap) return cap + 1;
    prev2 = prev;
    prev = cur;
  }
  return prev[b.length] as number;
}

function trigrams(term: string): string[] {
  const padded = ` ${term} `;
  const out = new Set<string>();
  for (let i = 0; i + 3 <= padded.length; i++) out.add(padded.slice(i, i + 3));
  return [...out];
}

export class FuzzyVocabulary {
  private readonly terms: string[] = [];
  private readonly grams = new Map<string, number[]>();
  private readonly gramCounts: number[] = [];
  private shared = new Uint16Array(0);
  private readonly memo = new Map<string, { term: string; similarity: number }[]>();

  /**
   * Only ASCII terms take part: Chinese has its own fallback (bigrams). `clipped`: terms that may
   * be clipped words (the parts of tool names).
   */
  constructor(vocabulary: Iterable<string>, private readonly clipped: ReadonlySet<string> = new Set()) {
    for (const term of vocabulary) {
      if (term.length < MIN_LENGTH - 1 || !/^[a-z0-9]+$/.test(term)) continue;
      const id = this.terms.length;
      this.terms.push(term);
      const gs = trigrams(term);
      this.gramCounts.push(gs.length);
      for (const g of gs) {
        const list = this.grams.get(g);
        if (list) list.push(id);
        else this.grams.set(g, [id]);
      }
    }
  }

  /**
   * Index terms within a few edits of `term`, with a similarity in (0, 1), best first. With
   * `typos` false (the query word is a real word, not a misspelling), only the clipped name
   * parts the word begins with.
   */
  near(term: string, typos = true): { term: string; similarity: number }[] {
    if (term.length < MIN_LENGTH || !/^[a-z0-9]+$/.test(term)) return [];
    if (!typos && this.clipped.size === 0) return [];
    const key = typos ? term : `${term}\u0000`;
    const hit = this.memo.get(key);
    if (hit) return hit;
    const gs = trigrams(term);
    if (this.shared.length !== this.terms.length) this.shared = new Uint16Array(this.terms.length);
    const shared = this.shared;
    const candidates: number[] = [];
    for (const g of gs) {
      for (const id of this.grams.get(g) ?? []) {
        if (shared[id] === 0) candidates.push(id);
        shared[id] = (shared[id] as number) + 1;
      }
    }
    const out: { term: string; similarity: number }[] = [];
    for (const id of candidates) {
      const n = shared[id] as number;
      shared[id] = 0;
      const other = this.terms[id] as string;
      // A word and its longer form ("crypto" / "cryptocurrency", "rent" / "rental").
      const [short, long] = term.length <= other.length ? [term, other] : [other, term];
      const clipping = short === other && this.clipped.has(other);
      if (short.length >= MIN_LENGTH && long.startsWith(short) && short.length / long.length >= (clipping ? CLIPPED_MIN_SHARE : 0.5)) {
        if (typos || clipping) out.push({ term: other, similarity: (0.8 * short.length) / long.length });
        continue;
      }
      if (!typos) continue;
      const dice = (2 * n) / (gs.length + (this.gramCounts[id] as number));
      if (dice < MIN_DICE) continue;
      const cap = maxEdits(Math.min(term.length, other.length));
      const d = editDistance(term, other, cap);
      if (d <= cap) out.push({ term: other, similarity: 1 - d / Math.max(term.length, other.length) });
    }
    out.sort((a, b) => b.similarity - a.similarity);
    const best = out.slice(0, MAX_MATCHES);
    if (this.memo.size < 10_000) this.memo.set(key, best);
    return best;
  }
}
