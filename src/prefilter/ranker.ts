import { queryConcepts } from './analyze.js';
import type { Postings } from './bm25f.js';
import { termOf } from './english.js';
import type { FuzzyVocabulary } from './fuzzy.js';
import type { Lexicon } from './lexicon.js';
import { type NameMatcher, splitCompound } from './names.js';
import { Accumulator } from './accumulate.js';
import { explainMatch } from './explain.js';
import type { Candidate, Concept, SearchOptions } from './types.js';

/** What the ranker reads from an index. */
export interface SearchableIndex {
  readonly size: number;
  readonly names: readonly string[];
  readonly postings: ReadonlyMap<string, Postings>;
  readonly matcher: NameMatcher;
  readonly fuzzy: FuzzyVocabulary;
  readonly words: ReadonlySet<string>;
  readonly lexicon: Lexicon | null;
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

/** A long query (a pasted document) is cut to this many distinct words, the rarest kept. */
const MAX_CONCEPTS = 64;
/** How much matching every query word is worth over matching one strongly. */
const COVERAGE_BONUS = 0.5;
/** Weight of typo and run-together-word readings against an exact term. */
const FALLBACK_WEIGHT = 0.7;

function resolveAlt(ix: SearchableIndex, terms: readonly string[], weight: number, primary = false): ResolvedAlt | null {
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

/** Looks the concept's terms up; an English word the index lacks gets typo and compound readings. */
function resolve(ix: SearchableIndex, c: Concept): ResolvedConcept {
  const alts: ResolvedAlt[] = [];
  c.alternatives.forEach((a, i) => {
    const r = resolveAlt(ix, a.terms, a.weight, i === 0);
    if (r) alts.push(r);
  });
  const first = c.alternatives[0]?.terms[0];
  if (first !== undefined && /^[a-z0-9]+$/.test(first) && !ix.postings.has(first)) {
    const parts = splitCompound(c.label, ix.words)?.map(termOf).filter((t): t is string => t !== null);
    if (parts && parts.length > 1) {
      const r = resolveAlt(ix, parts, FALLBACK_WEIGHT / Math.sqrt(parts.length));
      if (r) alts.push(r);
    }
    for (const { term, similarity } of ix.fuzzy.near(first)) {
      const r = resolveAlt(ix, [term], FALLBACK_WEIGHT * similarity);
      if (r) alts.push(r);
    }
  }
  return { label: c.label, alts };
}

const accumulators = new WeakMap<SearchableIndex, Accumulator>();
function accumulatorFor(ix: SearchableIndex): Accumulator {
  let acc = accumulators.get(ix);
  if (!acc) {
    acc = new Accumulator(ix.size);
    accumulators.set(ix, acc);
  }
  return acc;
}

/** How telling a concept is (weighted IDF of its rarest term), to keep the best words of a long query. */
function strength(c: ResolvedConcept, size: number): number {
  let best = 0;
  for (const a of c.alts) for (const p of a.postings) best = Math.max(best, a.weight * Math.log(1 + size / p.docs.length));
  return best;
}

export function rank(ix: SearchableIndex, query: string, opts: SearchOptions): Candidate[] {
  const k = Math.max(0, Math.floor(opts.k));
  if (k === 0 || ix.size === 0) return [];
  const allowed = (d: number): boolean => !opts.filter || opts.filter(ix.names[d] as string);

  let concepts = queryConcepts(query, ix.lexicon).map((c) => resolve(ix, c)).filter((c) => c.alts.length > 0);
  if (concepts.length > MAX_CONCEPTS) {
    concepts = concepts.map((c) => ({ c, s: strength(c, ix.size) })).sort((a, b) => b.s - a.s).slice(0, MAX_CONCEPTS).map((x) => x.c);
  }
  const acc = accumulatorFor(ix);
  acc.run(concepts);
  let picked: [number, number][];
  const namedSet = new Set<number>();
  try {
    const { total, matched, touched, touchedCount } = acc;
    // Final scores in place, with the coverage bonus.
    let top = 0;
    for (let j = 0; j < touchedCount; j++) {
      const d = touched[j] as number;
      const s = (total[d] as number) * (1 + (COVERAGE_BONUS * (matched[d] as number)) / concepts.length);
      total[d] = s;
      if (s > top) top = s;
    }
    // Tools named outright go first, in their own score order.
    for (const d of ix.matcher.match(query)) if (allowed(d)) namedSet.add(d);
    const ordered: [number, number][] = [...namedSet].map((d) => [d, top + 1 + (total[d] as number)]);
    ordered.sort((a, b) => b[1] - a[1]);
    const rest = topK(touched.subarray(0, touchedCount), total, k - Math.min(k, ordered.length), (d) => !namedSet.has(d) && allowed(d));
    picked = [...ordered.slice(0, k), ...rest];
  } finally {
    acc.reset(); // even if the caller's filter throws
  }
  return picked.map(([d, s]) => {
    const c: Candidate = { name: ix.names[d] as string, score: Math.round(s * 1e4) / 1e4 };
    if (opts.explain) c.why = { matched: explainMatch(d, concepts), ...(namedSet.has(d) ? { named: true } : {}) };
    return c;
  });
}

/** The k best (doc, score) pairs that pass `ok`, best first; `ok` runs only on contenders. */
function topK(docs: Int32Array, score: Float64Array, k: number, ok: (d: number) => boolean): [number, number][] {
  const best: [number, number][] = [];
  if (k <= 0) return best;
  for (const d of docs) {
    const s = score[d] as number;
    if (s <= 0) continue;
    if (best.length === k && s <= (best[k - 1] as [number, number])[1]) continue;
    if (!ok(d)) continue;
    let i = best.length;
    while (i > 0 && (best[i - 1] as [number, number])[1] < s) i--;
    best.splice(i, 0, [d, s]);
    if (best.length > k) best.pop();
  }
  return best;
}
