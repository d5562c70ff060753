import { describe, expect, it } from 'vitest';
import { Counter, Histogram, Registry } from 'prom-client';
import { BoundCounter, BoundHistogram } from '../../src/metrics/bound.js';

const BOUNDS = [0.001, 0.01, 0.1, 1, 10];

/** The same observations through prom-client and through the bound metrics. */
function both() {
  const ref = new Registry();
  const ours = new Registry();
  const refCounter = new Counter({ name: 't_calls_total', help: 'calls', labelNames: ['tool', 'outcome'], registers: [ref] });
  const refHist = new Histogram({ name: 't_seconds', help: 'latency', labelNames: ['tool'], buckets: BOUNDS, registers: [ref] });
  const counter = new BoundCounter({ name: 't_calls_total', help: 'calls', labelNames: ['tool', 'outcome'], registers: [ours] });
  const hist = new BoundHistogram({ name: 't_seconds', help: 'latency', labelNames: ['tool'], buckets: BOUNDS, registers: [ours] });
  const calls: [string, string, number][] = [
    ['a.b', 'ok', 0.0004],
    ['a.b', 'ok', 0.001],
    ['a.b', 'error', 0.05],
    ['c "quoted"\\x', 'ok', 3],
    ['c "quoted"\\x', 'ok', 99],
  ];
  const handles = new Map<string, { inc(): void }>();
  for (const [tool, outcome, v] of calls) {
    refCounter.labels({ tool, outcome }).inc();
    refHist.labels({ tool }).observe(v);
    const key = `${tool}/${outcome}`;
    if (!handles.has(key)) handles.set(key, counter.labels({ tool, outcome }));
    handles.get(key)?.inc();
    hist.labels({ tool }).observe(v);
  }
  return { ref, ours, refCounter, refHist, counter, hist, handles };
}

describe('bound metrics', () => {
  it('write the same exposition text as prom-client for the same observations', async () => {
    const { ref, ours } = both();
    const text = await ours.metrics();
    expect(text).toBe(await ref.metrics());
    expect(text).toContain('t_seconds_bucket{le="0.001",tool="a.b"} 2');
    expect(text).toContain('t_seconds_bucket{le="+Inf",tool="c \\"quoted\\"\\\\x"} 2');
  });

  it('remove() drops a series like prom-client does, and a bound handle adds it back from zero', async () => {
    const { ref, ours, refCounter, refHist, counter, hist, handles } = both();
    refCounter.remove({ tool: 'a.b', outcome: 'ok' });
    counter.remove({ tool: 'a.b', outcome: 'ok' });
    refHist.remove({ tool: 'a.b' });
    hist.remove({ tool: 'a.b' });
    expect(await ours.metrics()).toBe(await ref.metrics());
    expect(await ours.metrics()).not.toContain('tool="a.b",outcome="ok"');
    handles.get('a.b/ok')?.inc();
    refCounter.labels({ tool: 'a.b', outcome: 'ok' }).inc();
    expect(await ours.metrics()).toBe(await ref.metrics());
    expect(await ours.metrics()).toContain('t_calls_total{tool="a.b",outcome="ok"} 1');
  });
});
