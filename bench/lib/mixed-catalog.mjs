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
