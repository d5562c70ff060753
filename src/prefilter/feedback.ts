import type { ScoredConcept } from './accumulate.js';
import type { Postings } from './bm25f.js';

/**
 * Pseudo-relevance feedback (RM3-style): the best tools of a first pass lend their most telling
 * terms to the query as weak extra terms, so that tools saying the same thing in other words move
 * up. It reads a small forward index: each tool's strongest terms.
 */

/** Terms kept per tool: its most telling ones are all feedback reads. */
const TERMS_PER_DOC = 24;
/** Tools of the first pass read, terms added, and the weight of the strongest added term. */
export const FEEDBACK_DOCS = 3;
const FEEDBACK_TERMS = 20;
const FEEDBACK_WEIGHT = 0.3;

export interface ForwardIndex {
  /** Term id → its postings. */
  readonly lists: readonly Postings[];
  /** Tool d's strongest terms are termIds[offsets[d] .. offsets[d + 1]), with their impacts in d. */
  readonly offsets: Int32Array;
  readonly termIds: Int32Array;
  readonly impacts: Float32Array;
}

export function buildForward(postings: ReadonlyMap<string, Postings>, size: number): ForwardIndex {
  const lists = [...postings.values()];
  // All (term, impact) pairs grouped by tool, in flat arrays: no per-pair objects at 20,000 tools.
  const count = new Int32Array(size + 1);
  for (const p of lists) for (const d of p.docs) count[d + 1] = (count[d + 1] as number) + 1;
  for (let d = 0; d < size; d++) count[d + 1] = (count[d + 1] as number) + (count[d] as number);
  const fill = count.slice(0, size);
  const allIds = new Int32Array(count[size] as number);
  const allImpacts = new Float32Array(count[size] as number);
  lists.forEach((p, id) => {
    for (let i = 0; i < p.docs.length; i++) {
      const d = p.docs[i] as number;
      const at = fill[d] as number;
      allIds[at] = id;
      allImpacts[at] = p.impacts[i] as number;
      fill[d] = at + 1;
    }
  });
  // Keep each tool's strongest terms.
  const offsets = new Int32Array(size + 1);
  const termIds: number[] = [];
  const impacts: number[] = [];
  for (let d = 0; d < size; d++) {
    const from = count[d] as number;
    const order = Array.from({ length: (count[d + 1] as number) - from }, (_, i) => from + i);
    order.sort((a, b) => (allImpacts[b] as number) - (allImpacts[a] as number));
    for (const i of order.slice(0, TERMS_PER_DOC)) {
      termIds.push(allIds[i] as number);
      impacts.push(allImpacts[i] as number);
    }
    offsets[d + 1] = termIds.length;
  }
  return { lists, offsets, termIds: Int32Array.from(termIds), impacts: Float32Array.from(impacts) };
}

/**
 * Feedback terms for a first-pass ranking, as concepts: each term's share of each top tool's
 * strength, weighted by the tool's share of the top scores, summed; the strongest terms the query
 * did not already use, the best weighted FEEDBACK_WEIGHT.
 */
export function feedbackConcepts(fwd: ForwardIndex, top: readonly (readonly [number, number])[], used: ReadonlySet<Postings>): ScoredConcept[] {
  let total = 0;
  for (const [, s] of top) total += s;
  if (total <= 0) return [];
  const sum = new Map<number, number>();
  for (const [d, s] of top) {
    const from = fwd.offsets[d] as number;
    const to = fwd.offsets[d + 1] as number;
    let mass = 0;
    for (let i = from; i < to; i++) mass += fwd.impacts[i] as number;
    if (mass <= 0) continue;
    for (let i = from; i < to; i++) {
      const id = fwd.termIds[i] as number;
      if (used.has(fwd.lists[id] as Postings)) continue;
      sum.set(id, (sum.get(id) ?? 0) + ((s / total) * (fwd.impacts[i] as number)) / mass);
    }
  }
  const best = [...sum].sort((a, b) => b[1] - a[1]).slice(0, FEEDBACK_TERMS);
  const max = best[0]?.[1] ?? 0;
  if (max <= 0) return [];
  return best.map(([id, v]) => ({ alts: [{ postings: [fwd.lists[id] as Postings], weight: (FEEDBACK_WEIGHT * v) / max }] }));
}
