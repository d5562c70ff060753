import type { Postings } from './bm25f.js';

/** A query concept with its postings looked up (see ranker.ts). */
export interface ScoredConcept {
  alts: readonly { postings: readonly Postings[]; weight: number }[];
}

/**
 * Dense per-index buffers, reused by every search (search is synchronous, so one set per index
 * is enough). Typed arrays and counters instead of growing arrays keep the garbage collector out
 * of the query path at 20,000 tools.
 */
export class Accumulator {
  readonly total: Float64Array;
  readonly matched: Uint16Array;
  private readonly concept: Float64Array;
  private readonly alt: Float64Array;
  readonly touched: Int32Array;
  touchedCount = 0;
  private readonly cTouched: Int32Array;
  private readonly aTouched: Int32Array;

  constructor(size: number) {
    this.total = new Float64Array(size);
    this.matched = new Uint16Array(size);
    this.concept = new Float64Array(size);
    this.alt = new Float64Array(size);
    this.touched = new Int32Array(size);
    this.cTouched = new Int32Array(size);
    this.aTouched = new Int32Array(size);
  }

  /**
   * Adds each concept's score to `total` and counts matched concepts in `matched`, for every
   * document in `touched[0..touchedCount)`. A concept scores its best alternative: the many
   * senses of one word are not summed. Adds to what an earlier run since `reset` left.
   */
  run(concepts: readonly ScoredConcept[]): void {
    const { total, matched, concept, alt, touched, cTouched, aTouched } = this;
    let nt = this.touchedCount; // a second run (feedback terms) adds to the first
    for (const c of concepts) {
      let nc = 0;
      for (const a of c.alts) {
        const w = a.weight;
        if (a.postings.length === 1) {
          // One term: straight into the concept's best-of, no per-alternative pass.
          const { docs, impacts } = a.postings[0] as Postings;
          for (let i = 0; i < docs.length; i++) {
            const d = docs[i] as number;
            const v = (impacts[i] as number) * w;
            const cur = concept[d] as number;
            if (cur === 0) cTouched[nc++] = d;
            if (v > cur) concept[d] = v;
          }
          continue;
        }
        let na = 0;
        for (const { docs, impacts } of a.postings) {
          for (let i = 0; i < docs.length; i++) {
            const d = docs[i] as number;
            if (alt[d] === 0) aTouched[na++] = d;
            alt[d] = (alt[d] as number) + (impacts[i] as number) * w;
          }
        }
        for (let j = 0; j < na; j++) {
          const d = aTouched[j] as number;
          const v = alt[d] as number;
          const cur = concept[d] as number;
          if (cur === 0) cTouched[nc++] = d;
          if (v > cur) concept[d] = v;
          alt[d] = 0;
        }
      }
      for (let j = 0; j < nc; j++) {
        const d = cTouched[j] as number;
        if (matched[d] === 0) touched[nt++] = d;
        total[d] = (total[d] as number) + (concept[d] as number);
        matched[d] = (matched[d] as number) + 1;
        concept[d] = 0;
      }
    }
    this.touchedCount = nt;
  }

  /** Clears the scores left by the last run. */
  reset(): void {
    for (let j = 0; j < this.touchedCount; j++) {
      const d = this.touched[j] as number;
      this.total[d] = 0;
      this.matched[d] = 0;
    }
    this.touchedCount = 0;
  }
}
