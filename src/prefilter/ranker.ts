import { Accumulator } from './accumulate.js';
import { queryConcepts } from './analyze.js';
import type { Postings } from './bm25f.js';
import { explainMatch } from './explain.js';
import { FEEDBACK_DOCS, feedbackConcepts, type ForwardIndex } from './feedback.js';
import type { Lexicon } from './lexicon.js';
import type { NameMatcher } from './names.js';
import { type LookupIndex, type ResolvedConcept, resolve } from './resolve.js';
import type { Candidate, SearchOptions } from './types.js';
import { withCompounds } from './zh-compounds.js';

/** What the ranker reads from an index. */
export interface SearchableIndex extends LookupIndex {
  readonly names: readonly string[];
  readonly matcher: NameMatcher;
  readonly lexicon: Lexicon | null;
  /** Each tool's strongest terms, for pseudo-relevance feedback; null turns feedback off. */
  readonly forward: ForwardIndex | null;
  /** Lone Chinese query characters also read as the index's compounds (zh-compounds.ts); false: off. */
  readonly chineseReadings?: boolean;
}

/** A long query (a pasted document) is cut to this many distinct words, the rarest kept. */
const MAX_CONCEPTS = 64;
/** How much matching every query word is worth over matching one strongly. */
const COVERAGE_BONUS = 0.5;

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

/**
 * Second pass: the first pass's best tools lend their strongest terms to the query. Those tools
 * keep their first-pass scores, so feedback only lifts other tools that say the same things, and
 * cannot entrench the first pass's own order.
 */
function addFeedback(ix: SearchableIndex, acc: Accumulator, concepts: readonly ResolvedConcept[], allowed: (d: number) => boolean): void {
  if (!ix.forward || concepts.length === 0) return;
  const { total, touched } = acc;
  const first = topK(touched.subarray(0, acc.touchedCount), total, FEEDBACK_DOCS, allowed);
  const used = new Set<Postings>();
  for (const c of concepts) for (const a of c.alts) for (const p of a.postings) used.add(p);
  const kept = first.map(([, s]) => s);
  acc.run(feedbackConcepts(ix.forward, first, used));
  first.forEach(([d], i) => {
    total[d] = kept[i] as number;
  });
}

export function rank(ix: SearchableIndex, query: string, opts: SearchOptions): Candidate[] {
  const k = Math.max(0, Math.floor(opts.k));
  if (k === 0 || ix.size === 0) return [];
  const allowed = (d: number): boolean => !opts.filter || opts.filter(ix.names[d] as string);

  const raw = queryConcepts(query, ix.lexicon, ix.related);
  let concepts = raw.map((c) => resolve(ix, withCompounds(c, ix.chineseReadings === false ? null : ix.lexicon, ix.postings))).filter((c) => c.alts.length > 0);
  if (concepts.length > MAX_CONCEPTS) {
    concepts = concepts.map((c) => ({ c, s: strength(c, ix.size) })).sort((a, b) => b.s - a.s).slice(0, MAX_CONCEPTS).map((x) => x.c);
  }
  const acc = accumulatorFor(ix);
  let picked: [number, number][];
  const namedSet = new Set<number>();
  try {
    acc.run(concepts);
    const { total, matched, touched } = acc;
    // First-pass scores in place, with the coverage bonus.
    for (let j = 0; j < acc.touchedCount; j++) {
      const d = touched[j] as number;
      total[d] = (total[d] as number) * (1 + (COVERAGE_BONUS * (matched[d] as number)) / concepts.length);
    }
    if (opts.learned) acc.run(opts.learned(ix.names, raw)); // learned terms: after the coverage bonus, before feedback
    addFeedback(ix, acc, concepts, allowed);
    const touchedCount = acc.touchedCount;
    let top = 0;
    for (let j = 0; j < touchedCount; j++) top = Math.max(top, total[touched[j] as number] as number);
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
