import type { ScoredConcept } from '../accumulate.js';
import type { Postings } from '../bm25f.js';
import type { Concept, LearnedBoost } from '../types.js';
import type { LearnedStats } from './stats.js';
import { primaryTerm } from './terms.js';

/**
 * Learned terms as one more field of the index: a term learned for a tool scores like a BM25
 * term of that tool, saturating with evidence (w / (w + K)) and worth less the more tools learned
 * it (IDF over the registry). Compiled per index and statistics version, so a search only looks
 * its terms up.
 */
const LEARNED_WEIGHT = 1.6;
const K = 2;
/** Decay moves weights without a new version: a compiled view is rebuilt after this long anyway. */
const MAX_AGE_MS = 60_000;

interface Compiled {
  version: number;
  at: number;
  postings: Map<string, Postings>;
}

function compile(names: readonly string[], stats: LearnedStats, now: number): Map<string, Postings> {
  const doc = new Map<string, number>();
  names.forEach((n, i) => doc.set(n, i));
  const lists = new Map<string, [number, number][]>();
  for (const [tool, terms] of stats.weights(now)) {
    const d = doc.get(tool);
    if (d === undefined) continue; // learned for a tool this generation lacks: kept, not scored
    for (const [t, w] of terms) {
      let l = lists.get(t);
      if (!l) lists.set(t, (l = []));
      l.push([d, w]);
    }
  }
  const n = names.length;
  const out = new Map<string, Postings>();
  for (const [t, l] of lists) {
    l.sort((a, b) => a[0] - b[0]);
    const idf = Math.log(1 + (n - l.length + 0.5) / (l.length + 0.5));
    out.set(t, {
      docs: Int32Array.from(l, ([d]) => d),
      impacts: Float32Array.from(l, ([, w]) => (LEARNED_WEIGHT * idf * w) / (w + K)),
    });
  }
  return out;
}

/** The ranker's hook (SearchOptions.learned) over one replica's copy of the statistics. */
export function learnedBoost(stats: LearnedStats, now: () => number = Date.now): LearnedBoost {
  const views = new WeakMap<readonly string[], Compiled>();
  return (names: readonly string[], concepts: readonly Concept[]): ScoredConcept[] => {
    const t = now();
    let v = views.get(names);
    if (!v || v.version !== stats.version || t - v.at > MAX_AGE_MS) {
      v = { version: stats.version, at: t, postings: compile(names, stats, t) };
      views.set(names, v);
    }
    if (v.postings.size === 0) return [];
    const out: ScoredConcept[] = [];
    for (const c of concepts) {
      const term = primaryTerm(c);
      const p = term === undefined ? undefined : v.postings.get(term);
      if (p) out.push({ alts: [{ postings: [p], weight: c.alternatives[0]?.weight ?? 1 }] });
    }
    return out;
  };
}
