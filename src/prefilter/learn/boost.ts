import type { ScoredConcept } from '../accumulate.js';
import type { Postings } from '../bm25f.js';
import type { Concept, LearnedBoost } from '../types.js';
import { MIN_WEIGHT, scaleAt, type LearnedStats, type LearnedTerm } from './stats.js';
import { primaryTerm } from './terms.js';

/**
 * Learned terms as one more field of the index: a term learned for a tool scores like a BM25
 * term of that tool, saturating with evidence (w / (w + K)) and worth less the more tools learned
 * it (IDF over the registry). A term's postings are built when a search first needs them and kept
 * until that term's statistics change (or MAX_AGE_MS passes: decay), so learning one event costs
 * the next searches only its own few terms, never a rebuild of everything learned.
 */
const LEARNED_WEIGHT = 1.6;
const K = 2;
/** Decay moves weights without a change: a kept term's postings are rebuilt after this long anyway. */
const MAX_AGE_MS = 60_000;

interface View {
  doc: Map<string, number>;
  terms: Map<string, { v: number; at: number; p: Postings | undefined }>;
}

/** One term's learned postings over a registry's documents (undefined when none of its tools learned the term). */
function postingsOf(e: Readonly<LearnedTerm>, doc: ReadonlyMap<string, number>, k: number, n: number): Postings | undefined {
  // Sorted by document through one numeric sort of (document, row) packed in a float64.
  const keys = new Float64Array(e.tools.size);
  const ws = new Float64Array(e.tools.size);
  let rows = 0;
  for (const [tool, scaled] of e.tools) {
    const w = scaled * k;
    const d = w < MIN_WEIGHT ? undefined : doc.get(tool);
    if (d === undefined) continue; // decayed away, or learned for a tool this generation lacks: kept, not scored
    ws[rows] = w;
    keys[rows] = d * 2 ** 21 + rows;
    rows++;
  }
  if (rows === 0) return undefined;
  const order = keys.subarray(0, rows).sort();
  const idf = Math.log(1 + (n - rows + 0.5) / (rows + 0.5));
  const docs = new Int32Array(rows);
  const impacts = new Float32Array(rows);
  for (let i = 0; i < rows; i++) {
    const key = order[i] as number;
    const d = Math.floor(key / 2 ** 21);
    const w = ws[key - d * 2 ** 21] as number;
    docs[i] = d;
    impacts[i] = (LEARNED_WEIGHT * idf * w) / (w + K);
  }
  return { docs, impacts };
}

/** The ranker's hook (SearchOptions.learned) over one replica's copy of the statistics. */
export function learnedBoost(stats: LearnedStats, now: () => number = Date.now): LearnedBoost {
  const views = new WeakMap<readonly string[], View>();
  return (names: readonly string[], concepts: readonly Concept[]): ScoredConcept[] => {
    if (stats.toolCount === 0) return [];
    let view = views.get(names);
    if (!view) views.set(names, (view = { doc: new Map(names.map((name, i) => [name, i])), terms: new Map() }));
    const t = now();
    const out: ScoredConcept[] = [];
    for (const c of concepts) {
      const term = primaryTerm(c);
      const e = term === undefined ? undefined : stats.termOf(term);
      if (term === undefined || !e) continue;
      let kept = view.terms.get(term);
      if (!kept || kept.v !== e.v || t - kept.at > MAX_AGE_MS) {
        kept = { v: e.v, at: t, p: postingsOf(e, view.doc, 1 / scaleAt(t), names.length) };
        view.terms.set(term, kept);
      }
      if (kept.p) out.push({ alts: [{ postings: [kept.p], weight: c.alternatives[0]?.weight ?? 1 }] });
    }
    return out;
  };
}
