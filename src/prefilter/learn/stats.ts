/**
 * Learned term statistics: per tool, the analysed query terms that led callers to it, each with a
 * weight that halves every HALF_LIFE_MS. Only terms and numbers: never a query's text, caller or
 * session.
 *
 * Weights are kept "scaled": a weight w added at time t is stored as w · 2^((t − EPOCH) / H), so
 * adding is a plain increment (Redis HINCRBYFLOAT across replicas) and nothing is rewritten as
 * time passes; the weight now is the stored value · 2^(−(now − EPOCH) / H).
 */

export const HALF_LIFE_MS = 14 * 24 * 3600 * 1000;
export const EPOCH_MS = Date.UTC(2026, 0, 1);
/** Terms kept per tool (the strongest); a tool may hold up to SLACK × this before it is trimmed. */
export const MAX_TERMS_PER_TOOL = 48;
export const SLACK = 1.5;
/** Tools with learned terms (the weakest dropped first). */
export const MAX_TOOLS = 20000;
/** Terms one query contributes (its first ones). */
export const MAX_TERMS_PER_EVENT = 24;
/** Longest term kept (a Chinese word or a stemmed English word is far shorter). */
export const MAX_TERM_LENGTH = 40;
/** A weight below this (decayed away) no longer counts, and is not exported. */
export const MIN_WEIGHT = 0.01;

/** The factor that turns a weight at `now` into its stored (scaled) value. */
export function scaleAt(now: number): number {
  return 2 ** ((now - EPOCH_MS) / HALF_LIFE_MS);
}

/** tool → term → scaled weight. */
export type ScaledTable = Map<string, Map<string, number>>;

function sum(m: ReadonlyMap<string, number>): number {
  let s = 0;
  for (const v of m.values()) s += v;
  return s;
}

/** Keeps a tool's strongest `max` terms. */
export function trimTerms(terms: Map<string, number>, max = MAX_TERMS_PER_TOOL): void {
  if (terms.size <= max) return;
  const kept = [...terms].sort((a, b) => b[1] - a[1]).slice(0, max);
  terms.clear();
  for (const [t, v] of kept) terms.set(t, v);
}

/** The tools that learned one term; `v` is new after every change to them (a search's cache key). */
export interface LearnedTerm {
  tools: Map<string, number>;
  v: number;
}

/**
 * One replica's copy of the statistics (with the memory store, the statistics themselves). Kept
 * twice over: per tool (bounds, export, reset) and per term (what a search looks up), both updated
 * in place, so learning costs a search nothing but its own terms' lookups.
 */
export class LearnedStats {
  private table: ScaledTable = new Map();
  /** term → tool → scaled weight: the same entries as `table`, by term (`v`: changes with the term's entries). */
  private byTerm = new Map<string, LearnedTerm>();
  private clock = 0;
  /** Bumped on every change. */
  version = 0;

  get toolCount(): number {
    return this.table.size;
  }

  /** Adds `weight` to each term of `tool` at time `now`, within the bounds. */
  add(tool: string, terms: readonly string[], weight: number, now: number): void {
    if (terms.length === 0 || !(weight > 0)) return;
    let m = this.table.get(tool);
    if (!m) this.table.set(tool, (m = new Map()));
    const inc = weight * scaleAt(now);
    for (const t of terms.slice(0, MAX_TERMS_PER_EVENT)) {
      const v = (m.get(t) ?? 0) + inc;
      m.set(t, v);
      this.index(t, tool, v);
    }
    if (m.size > MAX_TERMS_PER_TOOL * SLACK) {
      const before = [...m.keys()];
      trimTerms(m);
      for (const t of before) if (!m.has(t)) this.unindex(t, tool);
    }
    if (this.table.size > MAX_TOOLS) this.dropWeakest();
    this.version++;
  }

  private index(term: string, tool: string, scaled: number): void {
    let e = this.byTerm.get(term);
    if (!e) this.byTerm.set(term, (e = { tools: new Map(), v: 0 }));
    e.tools.set(tool, scaled);
    e.v = ++this.clock;
  }

  private unindex(term: string, tool: string): void {
    const e = this.byTerm.get(term);
    if (!e) return;
    e.tools.delete(tool);
    e.v = ++this.clock;
    if (e.tools.size === 0) this.byTerm.delete(term);
  }

  private remove(tool: string): boolean {
    const m = this.table.get(tool);
    if (!m) return false;
    for (const t of m.keys()) this.unindex(t, tool);
    return this.table.delete(tool);
  }

  /** Drops the weakest tools down to 95 % of the bound (so the sort is not paid on every new tool). */
  private dropWeakest(): void {
    const order = [...this.table].map(([t, m]) => [t, sum(m)] as const).sort((a, b) => a[1] - b[1]);
    for (const [t] of order.slice(0, this.table.size - Math.floor(MAX_TOOLS * 0.95))) this.remove(t);
  }

  /** Forgets one tool; true when it had learned terms. */
  reset(tool: string): boolean {
    const had = this.remove(tool);
    if (had) this.version++;
    return had;
  }

  /** Replaces everything (an import, or a refresh from the shared store). */
  replace(table: ScaledTable): void {
    this.table = table;
    this.byTerm = new Map();
    for (const [tool, m] of table) for (const [t, v] of m) this.index(t, tool, v);
    this.version++;
  }

  /** The tools that learned `term`, with their scaled weights (multiply by 1 / scaleAt(now)). */
  termOf(term: string): Readonly<LearnedTerm> | undefined {
    return this.byTerm.get(term);
  }

  /** The weights now: tool → term → weight, those decayed below MIN_WEIGHT left out. */
  weights(now: number): Map<string, Map<string, number>> {
    const k = 1 / scaleAt(now);
    const out = new Map<string, Map<string, number>>();
    for (const [tool, m] of this.table) {
      const w = new Map<string, number>();
      for (const [t, v] of m) if (v * k >= MIN_WEIGHT) w.set(t, v * k);
      if (w.size > 0) out.set(tool, w);
    }
    return out;
  }

  /** The terms learned for one tool among `terms`, strongest first (for explanations). */
  matched(tool: string, terms: readonly string[], now: number): string[] {
    const m = this.table.get(tool);
    if (!m) return [];
    const k = 1 / scaleAt(now);
    return terms.filter((t) => (m.get(t) ?? 0) * k >= MIN_WEIGHT).sort((a, b) => (m.get(b) ?? 0) - (m.get(a) ?? 0));
  }

  /** A copy of the scaled table (for the shared store's import). */
  scaled(): ScaledTable {
    return new Map([...this.table].map(([t, m]) => [t, new Map(m)]));
  }
}

/** Weights at `now` (tool → term → weight) as a scaled table. */
export function scaledFrom(weights: ReadonlyMap<string, ReadonlyMap<string, number>>, now: number): ScaledTable {
  const k = scaleAt(now);
  const out: ScaledTable = new Map();
  for (const [tool, m] of weights) {
    const s = new Map<string, number>();
    for (const [t, w] of m) s.set(t, w * k);
    trimTerms(s);
    out.set(tool, s);
  }
  return out;
}
