import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { PrefilterIndex } from '../../../src/prefilter/index.js';
import type { PrefilterTool } from '../../../src/prefilter/types.js';

// Mixed catalogs (see test/fixtures/prefilter/README.md): the dev tools (one-line descriptions, no
// parameters) merged with our 200 MCP tools written in another style (long descriptions, parameter
// docs, one author's boilerplate per server). Each part's queries must find their tools about as
// well in the union as in their part alone. Measured when set (this sample; bench figures in
// docs/benchmarks.md): dev 0.699 alone, 0.635 merged; ours 0.780 alone, 0.755 merged. The ranker
// before the fix: dev 0.704 → 0.610 (-0.094), ours 0.679 alone, so both tests fail on it.

const fixture = (file: string): URL => new URL(`../../fixtures/prefilter/${file}`, import.meta.url);
const lines = (text: string): unknown[] => text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as unknown);

interface Query { query: string; gold: string[] }
interface McpTool { name: string; description: string; inputSchema: { properties?: Record<string, { description?: string }> } }

/** As bench/prefilter.mjs and src/prefilter/registry-index.ts read tools. */
function devTool(t: { id: string; description: string }): PrefilterTool {
  const name = t.id.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().replace(/[^a-z0-9_-]+/g, '_');
  return { name, providerName: name, aliases: name === t.id ? [] : [t.id], description: t.description, tags: [], examples: [], params: [] };
}
function mcpTool(t: McpTool): PrefilterTool {
  const params = Object.entries(t.inputSchema.properties ?? {}).map(([name, p]) => (p.description ? { name, description: p.description } : { name }));
  return { name: t.name, providerName: t.name.replace(/\./g, '__'), description: t.description, tags: [], examples: [], params };
}

function recallAt5(index: PrefilterIndex, queries: readonly Query[]): number {
  let found = 0;
  for (const q of queries) {
    const names = index.search(q.query, { k: 5 }).map((c) => c.name);
    found += q.gold.filter((g) => names.includes(g)).length / q.gold.length;
  }
  return found / queries.length;
}

const devRaw = lines(readFileSync(fixture('metatool-tools.jsonl'), 'utf8')) as { id: string; description: string }[];
const devNames = new Map(devRaw.map((t) => [t.id, devTool(t).name]));
const devTools = devRaw.map(devTool);
// 392 dev queries (every 50th line, offset 5: outside the bench's scored sample).
const devQueries = (lines(readFileSync(fixture('metatool-queries-sample.jsonl'), 'utf8')) as Query[]).map((q) => ({
  query: q.query, gold: q.gold.map((g) => devNames.get(g) ?? g),
}));
const ownDefs = lines(gunzipSync(readFileSync(fixture('mixed-tools.jsonl.gz'))).toString('utf8')) as McpTool[];
const ownTools = ownDefs.map(mcpTool);
const ownQueries = lines(readFileSync(fixture('mixed-queries.jsonl'), 'utf8')) as Query[];

describe('mixed catalog: recall holds when differently written tool sets are merged', () => {
  let merged: PrefilterIndex;
  let own: PrefilterIndex;
  beforeAll(() => {
    merged = PrefilterIndex.build([...devTools, ...ownTools]);
    own = PrefilterIndex.build(ownTools);
  });

  it('has a second set of 200+ tools with long descriptions and parameter docs, and 100+ queries with known gold tools', () => {
    expect(ownTools.length).toBeGreaterThanOrEqual(200);
    const words = ownDefs.map((t) => t.description.split(/\s+/).length).sort((a, b) => a - b);
    expect(words[words.length >> 1]).toBeGreaterThanOrEqual(40);
    expect(ownTools.every((t) => t.params.length > 0 || t.name === 'pg.replication_status')).toBe(true);
    expect(ownQueries.length).toBeGreaterThanOrEqual(100);
    const names = new Set(ownTools.map((t) => t.name));
    for (const q of ownQueries) for (const g of q.gold) expect(names.has(g)).toBe(true);
    for (const q of devQueries) for (const g of q.gold) expect(devTools.some((t) => t.name === g)).toBe(true);
  });

  it('dev queries lose less when our long-description tools join their catalog', () => {
    const alone = recallAt5(PrefilterIndex.build(devTools), devQueries);
    const together = recallAt5(merged, devQueries);
    expect(alone).toBeGreaterThanOrEqual(0.68);
    expect(together).toBeGreaterThanOrEqual(alone - 0.075);
  });

  it('our queries lose little when the one-line dev tools join their catalog', () => {
    const alone = recallAt5(own, ownQueries);
    const together = recallAt5(merged, ownQueries);
    expect(alone).toBeGreaterThanOrEqual(0.74);
    expect(together).toBeGreaterThanOrEqual(alone - 0.045);
  });
});
