import type { CompiledBackend } from '../tools/types.js';

/** A source of numbers in [0, 1): injected so tests can assert shares deterministically. */
export type Rng = () => number;

/**
 * The order in which a call tries backends: lower priority first; within a priority, a
 * weighted random order (a backend with twice the weight comes first twice as often).
 */
export function orderBackends(backends: readonly CompiledBackend[], rng: Rng): CompiledBackend[] {
  const byPriority = new Map<number, CompiledBackend[]>();
  for (const b of backends) byPriority.set(b.priority, [...(byPriority.get(b.priority) ?? []), b]);
  const out: CompiledBackend[] = [];
  for (const p of [...byPriority.keys()].sort((a, b) => a - b)) out.push(...weightedOrder(byPriority.get(p) ?? [], rng));
  return out;
}

function weightedOrder(group: readonly CompiledBackend[], rng: Rng): CompiledBackend[] {
  const pool = [...group];
  const out: CompiledBackend[] = [];
  while (pool.length > 0) {
    const total = pool.reduce((s, b) => s + b.weight, 0);
    let i = 0;
    if (total > 0) {
      let r = rng() * total;
      while (i < pool.length - 1 && r >= (pool[i] as CompiledBackend).weight) r -= (pool[i++] as CompiledBackend).weight;
    }
    out.push(...pool.splice(i, 1));
  }
  return out;
}
