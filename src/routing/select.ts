import type { CompiledBackend } from '../tools/types.js';
import type { BackendView } from '../resilience/health.js';
import { backendMatches, type RouteContext } from './match.js';

/** A source of numbers in [0, 1): injected so tests can assert shares deterministically. */
export type Rng = () => number;

/**
 * The order in which a call tries backends. Open, disabled and unhealthy backends are left out; backends
 * with a match rule serve only the requests they match (and those requests only them); then lower
 * priority first, and within a priority a weighted random order, the declared weight scaled down
 * by observed errors, by latency far above the group's best, and by cost above the group's lowest.
 */
export function planAttempts(views: readonly BackendView[], ctx: RouteContext, rng: Rng): CompiledBackend[] {
  if (views.length === 1) {
    // The common case, without the grouping below: one backend, usable or not.
    const v = views[0] as BackendView;
    return isUsable(v) && (!v.backend.match || backendMatches(v.backend.match, ctx)) ? [v.backend] : [];
  }
  // Loops rather than callbacks: this runs for every call (no closure per call).
  const usable: BackendView[] = [];
  for (const v of views) if (isUsable(v)) usable.push(v);
  let pool: BackendView[] = [];
  for (const v of usable) if (v.backend.match && backendMatches(v.backend.match, ctx)) pool.push(v);
  if (pool.length === 0) for (const v of usable) if (!v.backend.match) pool.push(v);
  pool = pool.sort(byPriority); // stable: within a priority, the declared order
  const out: CompiledBackend[] = [];
  for (let i = 0; i < pool.length; ) {
    const priority = (pool[i] as BackendView).backend.priority;
    let j = i + 1;
    while (j < pool.length && (pool[j] as BackendView).backend.priority === priority) j++;
    weightedOrder(pool.slice(i, j), rng, out);
    i = j;
  }
  return out;
}

function isUsable(v: BackendView): boolean {
  return v.state !== 'open' && v.state !== 'disabled' && v.state !== 'unhealthy';
}

function byPriority(a: BackendView, b: BackendView): number {
  return a.backend.priority - b.backend.priority;
}

export function effectiveWeights(group: readonly BackendView[]): number[] {
  let bestLatency: number | undefined;
  let lowestCost = Infinity;
  for (const v of group) {
    if (v.latencyMs !== undefined && (bestLatency === undefined || v.latencyMs < bestLatency)) bestLatency = v.latencyMs;
    if (v.backend.cost < lowestCost) lowestCost = v.backend.cost;
  }
  // Only a backend far slower than the group's best loses share: load jitter must not move traffic.
  const bar = bestLatency === undefined ? Infinity : 3 * bestLatency + 50;
  const weights: number[] = [];
  for (const v of group) {
    const health = Math.max(0.05, 1 - v.errorRate);
    const latency = v.latencyMs !== undefined && v.latencyMs > bar ? Math.max(0.25, bar / v.latencyMs) : 1;
    const cost = (1 + lowestCost) / (1 + v.backend.cost);
    weights.push(v.backend.weight * health * latency * cost);
  }
  return weights;
}

/** Appends the group's backends to `out` in a weighted random order. */
function weightedOrder(group: readonly BackendView[], rng: Rng, out: CompiledBackend[]): void {
  const weights = effectiveWeights(group);
  const backends: CompiledBackend[] = [];
  for (const v of group) backends.push(v.backend);
  while (backends.length > 0) {
    let total = 0;
    for (const w of weights) total += w;
    let i = 0;
    if (total > 0) {
      let r = rng() * total;
      while (i < backends.length - 1 && r >= (weights[i] ?? 0)) r -= weights[i++] ?? 0;
    }
    out.push(backends.splice(i, 1)[0] as CompiledBackend);
    weights.splice(i, 1);
  }
}
