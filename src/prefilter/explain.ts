import type { Postings } from './bm25f.js';
import type { ResolvedConcept } from './resolve.js';

function impactIn(p: Postings, doc: number): number {
  let lo = 0;
  let hi = p.docs.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const d = p.docs[mid] as number;
    if (d === doc) return p.impacts[mid] as number;
    if (d < doc) lo = mid + 1;
    else hi = mid - 1;
  }
  return 0;
}

/**
 * The query words that matched a tool, best reading of each: "weather" for a direct match,
 * "天气→weather" when a translation, typo or compound reading matched instead.
 */
export function explainMatch(doc: number, concepts: readonly ResolvedConcept[]): string[] {
  const out: string[] = [];
  for (const c of concepts) {
    let best = 0;
    let terms: string[] = [];
    let primary = false;
    for (const a of c.alts) {
      let s = 0;
      const hit: string[] = [];
      a.postings.forEach((p, i) => {
        const v = impactIn(p, doc);
        if (v > 0) {
          s += v * a.weight;
          hit.push(a.terms[i] as string);
        }
      });
      if (s > best) {
        best = s;
        terms = hit;
        primary = a.primary;
      }
    }
    if (best === 0) continue;
    out.push(primary ? c.label : `${c.label}→${terms.join(' ')}`);
  }
  return out;
}
