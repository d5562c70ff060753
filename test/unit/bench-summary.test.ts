import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module of the benchmarks, without type declarations
import { summaryTable } from '../../bench/lib/summary.mjs';

const block = (id: string, json: unknown, comment = false) =>
  `<!-- bench:${id} -->\nMeasured 2026-11-30 03:47 UTC on a machine.\n\n| a table |\n${comment ? `<!-- ${JSON.stringify(json)} -->` : JSON.stringify(json)}\n<!-- /bench:${id} -->`;

describe('the benchmarks summary table', () => {
  it('reads each block\'s JSON line and says met or missed against each target', () => {
    const doc = [
      '# Benchmarks',
      block('http-overhead', { bench: 'http-overhead', connections: 32, rate: 500, ratios: { throughput: 0.68, p99: 1.1, addedP50AtRate: 0.5 }, met: { throughput: false, p99: true, addedP50AtRate: true } }),
      block('mcp-pool', { bench: 'mcp-pool', pool: { median: 0.4 }, direct: { median: 0.32 }, spawnPerCall: { median: 350 } }),
      block('peers', { bench: 'peers', rows: [
        { id: 'toolgate-mcp', serial: { median: 2.6 }, conc: { rps: 1900 } },
        { id: 'supergateway-sse', serial: { median: 2.5 }, conc: { rps: 1500 } },
        { id: 'direct', serial: { median: 0.4 }, conc: { rps: 25000 } },
      ] }, true),
      block('reload', { bench: 'reload', files: 5000, small: { median: 108 }, large: { median: 157 }, load: { cold: 3459 } }),
      '<!-- bench:pipeline -->\n(failed with 1)\n<!-- /bench:pipeline -->',
    ].join('\n\n');
    const rows = (summaryTable(doc) as string).split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| bench') && !l.startsWith('| ---'));
    const row = (text: string) => rows.find((r) => r.includes(text)) ?? '';
    expect(row('throughput vs bare')).toContain('| 0.68× | ≥ 0.85× | **missed** | 2026-11-30 03:47 |');
    expect(row('p99 vs bare')).toContain('| met |');
    expect(row('pool vs a direct SDK client')).toContain('1.25×');
    expect(row('pool vs a direct SDK client')).toContain('| met |');
    expect(row('spawn-per-call')).toContain('875× faster');
    // the direct client is the floor, not a peer: /mcp is behind supergateway on latency, ahead on calls/s
    expect(row('`/mcp`: serial median')).toContain('2.60 vs 2.50 ms | ahead | **missed**');
    expect(row('`/mcp`: calls/s')).toContain('1,900 vs 1,500 | ahead | met');
    expect(row('cold load, 5000 files')).toContain('**missed**');
    expect(rows.some((r) => r.includes('pipeline'))).toBe(false); // a failed run leaves no row
    expect(summaryTable(doc)).toContain('(7 met, 3 missed)');
  });
});
