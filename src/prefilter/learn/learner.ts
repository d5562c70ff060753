import type { StateStore } from '../../state/types.js';
import { sha256Hex } from '../../util/hash.js';
import { newId } from '../../util/ids.js';
import type { Lexicon } from '../lexicon.js';
import type { SearchEvent } from '../search-events.js';
import type { LearnedBoost } from '../types.js';
import type { LearnedBackend } from './backend.js';
import { learnedBoost } from './boost.js';
import { exportFile, importTable, type LearnedFileT } from './file.js';
import type { LearnedStats } from './stats.js';
import { learnTerms } from './terms.js';

/** Learning events one caller may add per tool, and in all, per CAP_WINDOW_MS: no caller steers what others see. */
export const CALLER_TOOL_CAP = 3;
export const CALLER_CAP = 60;
export const CAP_WINDOW_MS = 3600_000;
/** A called tool the search did not offer teaches more: the ranker missed it. */
export const MISSED_WEIGHT = 2;
const REFRESH_MS = 2000;

export interface LearnerOptions {
  windowSeconds: number;
  /** Pending searches and the caps (shared across replicas with Redis). */
  state: StateStore;
  backend: LearnedBackend;
  /** This replica's copy, which ranking reads. */
  stats: LearnedStats;
  /** The current index's lexicon: queries are analysed as the prefilter analyses them. */
  lexicon: () => Lexicon | null;
  now?: () => number;
  onWarning?: (msg: string, err?: unknown) => void;
  /** How often the local copy is refreshed from the shared store (default 2 s). */
  refreshMs?: number;
}

interface Pending {
  id: string;
  terms: string[];
  candidates: string[];
}

export interface LearnerCounters {
  searches: number;
  learned: number;
  capped: number;
  /** Events lost because the store was unavailable (learning pauses; ranking goes on). */
  paused: number;
}

/**
 * prefilter.learn: a search with a session id is remembered (its analysed terms and candidates,
 * for windowSeconds); the session's next call that runs teaches the called tool those terms.
 * Storage work runs in the background: neither the search nor the call waits for it.
 */
export class Learner {
  readonly counters: LearnerCounters = { searches: 0, learned: 0, capped: 0, paused: 0 };
  readonly boost: LearnedBoost;
  private readonly now: () => number;
  private readonly busy = new Set<Promise<void>>();
  private readonly timer: NodeJS.Timeout;
  private down = false;

  constructor(private readonly o: LearnerOptions) {
    this.now = o.now ?? Date.now;
    this.boost = learnedBoost(o.stats, this.now);
    this.timer = setInterval(() => this.track(this.refresh()), o.refreshMs ?? REFRESH_MS);
    this.timer.unref();
    this.track(this.refresh());
  }

  /** A search answered for a session. */
  noteSearch(e: SearchEvent): void {
    const terms = learnTerms(e.query, this.o.lexicon());
    if (terms.length === 0 || e.sessionTag === '') return;
    this.counters.searches++;
    const p: Pending = { id: newId('l'), terms, candidates: [...e.candidates] };
    this.track(this.stored(() => this.o.state.set(pendingKey(e.callerKey, e.sessionTag), JSON.stringify(p), this.o.windowSeconds * 1000)));
  }

  /** A call that ran (not refused, not failed validation) in a session. */
  noteCall(c: { callerKey: string; sessionId: string; tool: string }): void {
    this.track(this.stored(() => this.learn(c)));
  }

  private async learn(c: { callerKey: string; sessionId: string; tool: string }): Promise<void> {
    const key = pendingKey(c.callerKey, c.sessionId);
    const raw = await this.o.state.get(key);
    const p = raw === undefined ? undefined : parsePending(raw);
    if (!p) return;
    // The next call only, once across replicas.
    if (!(await this.o.state.setIfAbsent(`toolgate:learn:used:${p.id}`, '1', this.o.windowSeconds * 1000))) return;
    await this.o.state.delete(key);
    const perTool = await this.o.state.increment(`toolgate:learn:cap:${sha256Hex(`${c.callerKey}\u0000${c.tool}`)}`, CAP_WINDOW_MS);
    const perCaller = await this.o.state.increment(`toolgate:learn:capc:${sha256Hex(c.callerKey)}`, CAP_WINDOW_MS);
    if (perTool > CALLER_TOOL_CAP || perCaller > CALLER_CAP) {
      this.counters.capped++;
      return;
    }
    const weight = p.candidates.includes(c.tool) ? 1 : MISSED_WEIGHT;
    const now = this.now();
    await this.o.backend.add(c.tool, p.terms, weight, now);
    // With a shared store, this replica sees its own event at once (the next refresh brings the others').
    if (this.o.backend.shared) this.o.stats.add(c.tool, p.terms, weight, now);
    this.counters.learned++;
  }

  private async refresh(): Promise<void> {
    await this.stored(() => this.o.backend.refresh(this.o.stats), false);
  }

  /** Runs a store operation; an unavailable store pauses learning (counted, logged once per outage). */
  private async stored(fn: () => Promise<unknown>, count = true): Promise<void> {
    try {
      await fn();
      if (this.down) this.o.onWarning?.('prefilter learning resumed: the shared store is back');
      this.down = false;
    } catch (e) {
      if (count) this.counters.paused++;
      if (!this.down) this.o.onWarning?.('prefilter learning paused: the shared store is unavailable (ranking goes on with the last copy)', e);
      this.down = true;
    }
  }

  private track(p: Promise<void>): void {
    this.busy.add(p);
    void p.finally(() => this.busy.delete(p));
  }

  /** Resolves when the background work begun so far has ended (tests, the bench). */
  async settled(): Promise<void> {
    while (this.busy.size > 0) await Promise.all([...this.busy]);
  }

  /** The learned terms of `tool` that the query has, strongest first (explain). */
  matched(tool: string, query: string): string[] {
    return this.o.stats.matched(tool, learnTerms(query, this.o.lexicon()), this.now());
  }

  /** The statistics as a file (with a shared store, its latest state when it answers). */
  async exportFile(): Promise<LearnedFileT> {
    await this.refresh();
    return exportFile(this.o.stats, this.now());
  }

  /** Replaces the statistics with a validated file's; with a shared store, every replica's. */
  async importFile(file: LearnedFileT): Promise<void> {
    const table = importTable(file, this.now());
    await this.o.backend.replace(table);
    this.o.stats.replace(table);
  }

  async reset(tool: string): Promise<boolean> {
    const had = await this.o.backend.reset(tool);
    return this.o.stats.reset(tool) || had;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.settled().catch(() => undefined);
    await this.o.backend.close();
  }
}

function pendingKey(callerKey: string, session: string): string {
  return `toolgate:learn:q:${sha256Hex(`${callerKey}\u0000${session}`)}`;
}

function parsePending(raw: string): Pending | undefined {
  try {
    const p = JSON.parse(raw) as Partial<Pending>;
    return typeof p.id === 'string' && Array.isArray(p.terms) && Array.isArray(p.candidates) ? (p as Pending) : undefined;
  } catch {
    return undefined;
  }
}
