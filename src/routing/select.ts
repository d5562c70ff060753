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
    const usable = v.state !== 'open' && v.state !== 'disabled' && v.state !== 'unhealthy';
    return usable && (!v.backend.match || backendMatches(v.backend.match, ctx)) ? [v.backend] : [];
  }
  const usable = views.filter((v) => v.state !== 'open' && v.state !== 'disabled' && v.state !== 'unhealthy');
  const matched = usable.filter((v) => v.backend.match && backendMatches(v.backend.match, ctx));
  const pool = matched.length > 0 ? matched : usable.filter((v) => !v.backend.match);
  const byPriority = new Map<number, BackendView[]>();
  for (const v of pool) byPriority.set(v.backend.priority, [...(byPriority.get(v.backend.priority) ?? []), v]);
  const out: CompiledBackend[] = [];
  for (const p of [...byPriority.keys()].sort((a, b) => a - b)) out.push(...weightedOrder(byPriority.get(p) ?? [], rng));
  return out;
}

export function effectiveWeights(group: readonly BackendView[]): number[] {
  const latencies = group.map((v) => v.latencyMs).filter((l): l is number => l !== undefined);
  const bestLatency = latencies.length > 0 ? Math.min(...latencies) : undefined;
  const lowestCost = Math.min(...group.map((v) => v.backend.cost));
  return group.map((v) => {
    const health = Math.max(0.05, 1 - v.errorRate);
    // Only a backend far slower than the group's best loses share: load jitter must not move traffic.
    const bar = bestLatency === undefined ? Infinity : 3 * bestLatency + 50;
    const latency = v.latencyMs !== undefined && v.latencyMs > bar ? Math.max(0.25, bar / v.latencyMs) : 1;
    const cost = (1 + lowestCost) / (1 + v.backend.cost);
    return v.backend.weight * health * latency * cost;
  });
}

function weightedOrder(group: readonly BackendView[], rng: Rng): CompiledBackend[] {
  const weights = effectiveWeights(group);
  const pool = group.map((v, i) => ({ b: v.backend, w: weights[i] as number }));
  const out: CompiledBackend[] = [];
  while (pool.length > 0) {
    const total = pool.reduce((s, x) => s + x.w, 0);
    let i = 0;
    if (total > 0) {
      let r = rng() * total;
      while (i < pool.length - 1 && r >= (pool[i]?.w ?? 0)) r -= pool[i++]?.w ?? 0;
    }
    out.push((pool.splice(i, 1)[0] as { b: CompiledBackend }).b);
  }
  return out;
}
