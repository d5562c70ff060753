import { LearnedStats, type ScaledTable } from './stats.js';

/**
 * Where learned statistics live: memory (one replica), or Redis (shared by every replica, kept
 * across restarts). A replica ranks with its local LearnedStats, never waiting on the store.
 */
export interface LearnedBackend {
  /** Shared by replicas (a replica mirrors its own events into its copy). */
  readonly shared: boolean;
  /** Adds one learning event (scaled weight `inc` per term) to the shared statistics. */
  add(tool: string, terms: readonly string[], weight: number, now: number): Promise<void>;
  /** Brings the local copy up to date with the shared statistics (no-op in memory). */
  refresh(local: LearnedStats): Promise<void>;
  /** Replaces the statistics (an import). */
  replace(table: ScaledTable): Promise<void>;
  /** Forgets one tool; true when it had learned terms. */
  reset(tool: string): Promise<boolean>;
  close(): Promise<void>;
}

/** The memory store: the local copy is the statistics. */
export class MemoryLearnedBackend implements LearnedBackend {
  readonly shared = false;
  constructor(private readonly stats: LearnedStats) {}

  async add(tool: string, terms: readonly string[], weight: number, now: number): Promise<void> {
    this.stats.add(tool, terms, weight, now);
  }

  async refresh(): Promise<void> {}

  async replace(table: ScaledTable): Promise<void> {
    this.stats.replace(table);
  }

  async reset(tool: string): Promise<boolean> {
    return this.stats.reset(tool);
  }

  async close(): Promise<void> {}
}

export { LearnedStats };
