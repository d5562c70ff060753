// The mixed-catalog rows of bench/prefilter.mjs: the dev set (one-line descriptions, no
// parameters) merged with our own long-description set (test/fixtures/prefilter/mixed-*), each
// part's queries ranked against that part alone and against the union.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

const fixtures = new URL('../../test/fixtures/prefilter/', import.meta.url);
const jsonl = (text) => text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));

/** An MCP tool definition as the prefilter sees it (as src/prefilter/registry-index.ts reads a compiled tool). */
export function mcpTool(t) {
  const props = t.inputSchema?.properties ?? {};
  return {
    name: t.name, providerName: t.name.replace(/\./g, '__'), description: t.description, tags: [], examples: [],
    params: Object.entries(props).map(([name, p]) => (typeof p.description === 'string' ? { name, description: p.description } : { name })),
  };
}

export function loadMixedSet() {
  const defs = jsonl(gunzipSync(readFileSync(new URL('mixed-tools.jsonl.gz', fixtures))).toString('utf8'));
  return { defs, tools: defs.map(mcpTool), queries: jsonl(readFileSync(new URL('mixed-queries.jsonl', fixtures), 'utf8')) };
}

/**
 * recall@5 (and the rest of `evaluate`) of each part alone and merged, for `build` (the prefilter)
 * and `baseline` (plain BM25). Returns { [ranker]: { dev: {alone, merged}, own: {alone, merged} } }.
 */
export function mixedCatalog({ devTools, devQueries, ownTools, ownQueries, rankers, evaluate }) {
  const union = [...devTools, ...ownTools];
  const out = {};
  for (const [key, build] of Object.entries(rankers)) {
    const merged = build(union);
    out[key] = {
      dev: { alone: evaluate(build(devTools), devQueries), merged: evaluate(merged, devQueries) },
      own: { alone: evaluate(build(ownTools), ownQueries), merged: evaluate(merged, ownQueries) },
    };
  }
  return out;
}

/**
 * The loss a catalog's growth alone costs, to read the merged rows against: each part is cut in
 * two halves (the dev tools alternately, our set by server, every other namespace), and each
 * half's queries are ranked against the half alone, the half plus the other half of its own part
 * (same style), and the half plus as many tools of the other part (other style). Both additions
 * are the same size, so their difference is what the other style costs beyond more tools.
 * Returns { dev, own }: each { alone, sameStyle, otherStyle } recall@5, averaged over the two halves
 * (weighted by their queries).
 */
export function equalSizeGrowth({ devTools, devQueries, ownTools, ownQueries, build, evaluate }) {
  const ns = (t) => t.name.split('.')[0];
  const servers = [...new Set(ownTools.map(ns))];
  const ownHalves = [0, 1].map((h) => ownTools.filter((t) => servers.indexOf(ns(t)) % 2 === h));
  const devHalves = [0, 1].map((h) => devTools.filter((_, i) => i % 2 === h));
  const part = (halves, queries, others) => {
    const sum = { alone: 0, sameStyle: 0, otherStyle: 0, n: 0 };
    for (const h of [0, 1]) {
      const mine = halves[h];
      const same = halves[1 - h];
      const other = others[h].slice(0, same.length);
      const names = new Set(mine.map((t) => t.name));
      const qs = queries.filter((q) => names.has(q.gold[0]));
      if (qs.length === 0) continue;
      sum.alone += evaluate(build(mine), qs).rec5 * qs.length;
      sum.sameStyle += evaluate(build([...mine, ...same]), qs).rec5 * qs.length;
      sum.otherStyle += evaluate(build([...mine, ...other]), qs).rec5 * qs.length;
      sum.n += qs.length;
    }
    const n = sum.n || 1;
    return { alone: sum.alone / n, sameStyle: sum.sameStyle / n, otherStyle: sum.otherStyle / n, n: sum.n, halfTools: [halves[0].length, halves[1].length] };
  };
  return { dev: part(devHalves, devQueries, ownHalves), own: part(ownHalves, ownQueries, devHalves) };
}
