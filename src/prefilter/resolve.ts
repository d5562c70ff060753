import type { Postings } from './bm25f.js';
import { termOf } from './english.js';
import type { FuzzyVocabulary } from './fuzzy.js';
import { splitCompound } from './names.js';
import type { RelatedTerms } from './related.js';
import type { Concept } from './types.js';

/** What resolving a query concept reads from an index. */
export interface LookupIndex {
  readonly size: number;
  readonly postings: ReadonlyMap<string, Postings>;
  readonly fuzzy: FuzzyVocabulary;
  readonly words: ReadonlySet<string>;
  readonly related: RelatedTerms | null;
}

/** A concept's alternative with its postings looked up; unknown terms dropped. */
export interface ResolvedAlt {
  terms: string[];
  postings: Postings[];
  weight: number;
  /** The word itself, not a translation or a fallback reading. */
  primary: boolean;
}
export interface ResolvedConcept {
  label: string;
  alts: ResolvedAlt[];
}

/** Weight of typo and run-together-word readings against an exact term. */
const FALLBACK_WEIGHT = 0.7;
/**
 * A word used at least this often in general English (SemCor tags) is a real word, not a typo:
 * "spices" is not "space", "cake" not "sake".
 */
const TYPO_MAX_FREQUENCY = 2;

function idf(size: number, p: Postings): number {
  return Math.log(1 + (size - p.docs.length + 0.5) / (p.docs.length + 0.5));
}

function resolveAlt(ix: LookupIndex, terms: readonly string[], weight: number, primary = false): ResolvedAlt | null {
  const found: string[] = [];
  const postings: Postings[] = [];
  for (const t of terms) {
    const p = ix.postings.get(t);
    if (p) {
      found.push(t);
      postings.push(p);
    }
  }
  return postings.length > 0 ? { terms: found, postings, weight, primary } : null;
}

/**
 * Another English reading of a word the index has (a synonym, a related word) never counts for
 * more than the word itself: its weight is cut so that its rarest term weighs no more than the
 * word's own IDF, and a rare synonym cannot outrank the word the user wrote. Translations are the
 * same word in the other language, not capped: Chinese-described tools must stay reachable.
 */
function capReadings(size: number, alts: ResolvedAlt[]): void {
  const own = alts[0]?.primary === true && alts[0].postings.length === 1 ? alts[0].postings[0] : undefined;
  if (!own) return;
  const cap = idf(size, own);
  for (const a of alts) {
    if (a.primary || a.terms.some((t) => t.charCodeAt(0) >= 0x3400)) continue;
    let top = 0;
    for (const p of a.postings) top = Math.max(top, idf(size, p));
    if (top > cap) a.weight *= cap / top;
  }
}

/** Looks the concept's terms up; an English word the index lacks gets typo and compound readings. */
export function resolve(ix: LookupIndex, c: Concept): ResolvedConcept {
  const alts: ResolvedAlt[] = [];
  c.alternatives.forEach((a, i) => {
    const r = resolveAlt(ix, a.terms, a.weight, i === 0);
    if (r) alts.push(r);
  });
  capReadings(ix.size, alts);
  const first = c.alternatives[0]?.terms[0];
  if (first !== undefined && /^[a-z0-9]+$/.test(first) && !ix.postings.has(first)) {
    const parts = splitCompound(c.label, ix.words)?.map(termOf).filter((t): t is string => t !== null);
    if (parts && parts.length > 1) {
      const r = resolveAlt(ix, parts, FALLBACK_WEIGHT / Math.sqrt(parts.length));
      if (r) alts.push(r);
    }
    const realWord = ix.related !== null && ix.related.frequency(c.label) >= TYPO_MAX_FREQUENCY;
    // A real word is no typo, but a tool name may still clip it ("repo" for "repositories").
    for (const { term, similarity } of ix.fuzzy.near(first, !realWord)) {
      const r = resolveAlt(ix, [term], FALLBACK_WEIGHT * similarity);
      if (r) alts.push(r);
    }
  }
  return { label: c.label, alts };
}
