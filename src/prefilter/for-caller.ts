import type { Caller } from '../auth/caller.js';
import type { HealthBook } from '../resilience/health.js';
import { listable } from '../tools/listable.js';
import type { Registry } from '../tools/registry.js';
import type { CompiledTool } from '../tools/types.js';
import { indexFor } from './registry-index.js';
import type { Candidate } from './types.js';

/** The learned-terms boost the index takes (prefilter.learn). */
type LearnedBoost = NonNullable<Parameters<ReturnType<typeof indexFor>['search']>[1]>['learned'];

/** How far past k the ranker looks, so that demoted tools (every backend down) can give way to working ones. */
export const LOOKAHEAD = 20;

export interface RankedTool {
  tool: CompiledTool;
  candidate: Candidate;
  /** Why the tool was demoted below the others (every backend open, disabled or unhealthy). */
  demoted?: string;
}

/**
 * A tool the prefilter may offer this caller: one it may see and that may be listed (held tools
 * never: tools/listable.ts), not `prefilter: false`, not deprecated.
 */
export function offerable(caller: Caller, t: CompiledTool | undefined): t is CompiledTool {
  return t !== undefined && t.visibility.prefilter && !t.deprecated && listable(caller, t);
}

/**
 * The prefilter's ranking for one caller (POST /v1/route, find_tools on /mcp): the best `k` tools
 * it may be offered, best first; a tool whose every backend is down comes after the others.
 */
export function rankFor(registry: Registry, health: HealthBook, caller: Caller, query: string, o: { k: number; explain?: boolean; learned?: LearnedBoost | undefined }): RankedTool[] {
  const eligible = (name: string) => offerable(caller, registry.get(name));
  const found = indexFor(registry).search(query, { k: o.k + LOOKAHEAD, filter: eligible, explain: o.explain === true, ...(o.learned ? { learned: o.learned } : {}) });
  const ranked = found.map((candidate): RankedTool => {
    const tool = registry.get(candidate.name)!;
    const states = tool.backends.map((b) => health.view(tool, b).state);
    const down = states.every((s) => s === 'open' || s === 'disabled' || s === 'unhealthy');
    return down ? { tool, candidate, demoted: `every backend is ${[...new Set(states)].join(' or ')}` } : { tool, candidate };
  });
  return [...ranked.filter((r) => !r.demoted), ...ranked.filter((r) => r.demoted)].slice(0, o.k);
}
