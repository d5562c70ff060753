import { describe, expect, it } from 'vitest';
import { planAttempts } from '../../src/routing/select.js';
import { compileMatch } from '../../src/routing/match.js';
import type { BackendView } from '../../src/resilience/health.js';
import type { CompiledBackend } from '../../src/tools/types.js';
import { seededRng } from '../helpers/rng.js';

function backend(id: string, over: Partial<CompiledBackend> = {}): CompiledBackend {
  return { id, weight: 1, priority: 0, cost: 0, match: undefined, target: { kind: 'builtin', name: 'echo' }, hash: id, ...over };
}
function view(b: CompiledBackend, over: Partial<BackendView> = {}): BackendView {
  return { backend: b, state: 'closed', errorRate: 0, latencyMs: undefined, retryAfterMs: undefined, ...over };
}
const ctx = { caller: 'agent-1', headers: {} };

function firstShares(views: BackendView[], n = 20000, seed = 7): Record<string, number> {
  const rng = seededRng(seed);
  const counts: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const first = planAttempts(views, ctx, rng)[0]!.id;
    counts[first] = (counts[first] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, v / n]));
}

describe('backend selection', () => {
  it('splits traffic by weight (80/20 within a percent)', () => {
    const shares = firstShares([view(backend('primary', { weight: 80 })), view(backend('backup', { weight: 20 }))]);
    expect(shares['primary']).toBeCloseTo(0.8, 1);
    expect(Math.abs((shares['backup'] ?? 0) - 0.2)).toBeLessThan(0.01);
  });

  it('is deterministic under the same seed', () => {
    const views = [view(backend('a', { weight: 3 })), view(backend('b', { weight: 2 })), view(backend('c', { weight: 5 }))];
    const run = () => Array.from({ length: 50 }, ((rng) => () => planAttempts(views, ctx, rng).map((b) => b.id).join())(seededRng(42)));
    expect(run()).toEqual(run());
  });

  it('tries a lower priority only after every backend of the higher one', () => {
    const views = [view(backend('replica', { priority: 1 })), view(backend('p1', { priority: 0 })), view(backend('p2', { priority: 0 }))];
    for (let s = 1; s < 20; s++) {
      const order = planAttempts(views, ctx, seededRng(s)).map((b) => b.id);
      expect(order.at(-1)).toBe('replica');
      expect(order.slice(0, 2).sort()).toEqual(['p1', 'p2']);
    }
  });

  it('leaves out open and disabled backends, keeps half-open ones for the probe', () => {
    const views = [view(backend('a'), { state: 'open' }), view(backend('b'), { state: 'disabled' }), view(backend('c'), { state: 'half_open' })];
    expect(planAttempts(views, ctx, seededRng(1)).map((b) => b.id)).toEqual(['c']);
  });

  it('moves share away from a backend with errors, high latency or higher cost', () => {
    const errors = firstShares([view(backend('ok')), view(backend('flaky'), { errorRate: 0.8 })]);
    expect(errors['ok']).toBeGreaterThan(0.8);
    const slow = firstShares([view(backend('fast'), { latencyMs: 10 }), view(backend('slow'), { latencyMs: 400 })]);
    expect(slow['fast']).toBeGreaterThan(0.75);
    const near = firstShares([view(backend('x'), { latencyMs: 10 }), view(backend('y'), { latencyMs: 14 })]);
    expect(near['x']).toBeCloseTo(0.5, 1); // jitter-sized differences do not move traffic
    const cost = firstShares([view(backend('cheap', { cost: 0 })), view(backend('dear', { cost: 3 }))]);
    expect(cost['cheap']).toBeCloseTo(0.8, 1);
  });

  it('keeps matched traffic apart: test callers to the replica, others never there', () => {
    const replica = backend('replica', { match: compileMatch({ callers: ['test-*'] }) });
    const views = [view(backend('main')), view(replica)];
    expect(planAttempts(views, { caller: 'test-bot', headers: {} }, seededRng(1)).map((b) => b.id)).toEqual(['replica']);
    expect(planAttempts(views, { caller: 'agent-1', headers: {} }, seededRng(1)).map((b) => b.id)).toEqual(['main']);
    const byHeader = backend('canary', { match: compileMatch({ header: { name: 'X-Canary', value: '1' } }) });
    expect(planAttempts([view(backend('main')), view(byHeader)], { caller: 'a', headers: { 'x-canary': '1' } }, seededRng(1))[0]!.id).toBe('canary');
  });
});
