import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpTool, startGateway, type TestGateway } from '../helpers/app.js';
import { json, Upstream } from '../helpers/upstream.js';

// Red team: a guard service that does its job on a big result (a log with a thousand names) must
// not stall the gateway: applying its spans, and replacing each value wherever else it occurs,
// is one pass over the result, not one per value.

const NAMES = 1000;
describe('red team: a webhook answering a thousand spans on a 2 MiB result', () => {
  let gw: TestGateway;
  const up = new Upstream();
  const hook = new Upstream();
  let note = '';
  const starts: number[] = [];
  beforeAll(async () => {
    // 2 MiB of log lines, each with a distinct name the classifier redacts.
    const lines: string[] = [];
    for (let i = 0, size = 0; size < 2 * 1024 * 1024; i++) {
      const line = `2026-12-02 request ${i} from user-${String(i % NAMES).padStart(4, '0')}x ok ${'.'.repeat(1000)}`;
      lines.push(line);
      size += line.length + 1;
    }
    note = lines.join('\n');
    // Byte offsets in the result's text block (the JSON as sent): the first occurrence of each name.
    const text = JSON.stringify({ note });
    const seen = new Set<string>();
    for (const m of text.matchAll(/user-\d{4}x/g)) {
      if (seen.has(m[0])) continue;
      seen.add(m[0]);
      starts.push(Buffer.byteLength(text.slice(0, m.index)));
    }
    await up.start();
    up.on((_req, res) => json(res, 200, { note }));
    await hook.start();
    hook.on((_req, res) => json(res, 200, { action: 'redact', spans: starts.map((s) => ({ block: 0, start: s, end: s + 10, kind: 'name' })) }));
    gw = await startGateway({
      tools: { 'w.yaml': httpTool('rt.hook', `${up.url}/x`, { timeoutMs: 20_000, result: { maxBytes: 4 * 1024 * 1024 }, resultGuards: [{ webhook: { url: `${hook.url}/check`, timeoutMs: 10_000 } }] }) },
    });
  }, 30_000);
  afterAll(async () => {
    await gw?.close();
    await up.close();
    await hook.close();
  });

  it('redacts every name in the text and the structuredContent, in well under a second of work', async () => {
    expect(starts.length).toBe(NAMES);
    const t0 = performance.now();
    const r = await gw.call('rt.hook', {});
    const ms = performance.now() - t0;
    expect(r.statusCode, r.body.slice(0, 600)).toBe(200);
    const body = r.json() as { result: { content: { text: string }[]; structuredContent: { note: string } } };
    expect(body.result.structuredContent.note).not.toMatch(/user-\d{4}x/);
    expect(body.result.content[0]?.text).not.toMatch(/user-\d{4}x/); // the JSON text carries the same values
    expect(body.result.structuredContent.note).toContain('[REDACTED:name]');
    expect(ms).toBeLessThan(2500);
  }, 30_000);
});
