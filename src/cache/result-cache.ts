import type { ToolResult } from '../adapters/types.js';
import type { StateStore } from '../state/types.js';
import { digest } from '../util/hash.js';
import { KeyBound } from './key-bound.js';

/** A result bigger than this is not worth a store round-trip (nor the memory). */
export const CACHE_MAX_BYTES = 256 * 1024;
/** How many cache and last-good entries one process keeps at most (the LRU evicts the rest). */
export const CACHE_MAX_ENTRIES = 10_000;
/** How long the last good result is kept for `fallback: { cache: true }`. */
export const LAST_GOOD_RETENTION_MS = 7 * 24 * 3600 * 1000;

export interface CachedEntry {
  result: ToolResult;
  /** Epoch ms when it was stored. */
  at: number;
}

export interface ResultCacheOptions {
  now?: () => number;
  maxEntries?: number;
  maxBytes?: number;
  onWarning?: (msg: string, err?: unknown) => void;
}

/**
 * Tool memory: results by tool name + canonical arguments, in the state store (so shared via
 * Redis when configured). Every failure of the store is a miss, never a failed call.
 */
export class ResultCache {
  private readonly bound: KeyBound;
  private readonly now: () => number;
  private readonly maxBytes: number;

  constructor(private readonly store: StateStore, private readonly opts: ResultCacheOptions = {}) {
    this.bound = new KeyBound(opts.maxEntries ?? CACHE_MAX_ENTRIES);
    this.now = opts.now ?? Date.now;
    this.maxBytes = opts.maxBytes ?? CACHE_MAX_BYTES;
  }

  static digestOf(tool: string, args: unknown): string {
    return digest({ tool, args });
  }

  get(tool: string, args: unknown): Promise<CachedEntry | undefined> {
    return this.read(`toolgate:cache:${ResultCache.digestOf(tool, args)}`);
  }

  put(tool: string, args: unknown, result: ToolResult, ttlMs: number): Promise<void> {
    return this.write(`toolgate:cache:${ResultCache.digestOf(tool, args)}`, result, ttlMs);
  }

  lastGood(tool: string, args: unknown): Promise<CachedEntry | undefined> {
    return this.read(`toolgate:lastgood:${ResultCache.digestOf(tool, args)}`);
  }

  putLastGood(tool: string, args: unknown, result: ToolResult): Promise<void> {
    return this.write(`toolgate:lastgood:${ResultCache.digestOf(tool, args)}`, result, LAST_GOOD_RETENTION_MS);
  }

  /** Whole seconds since the entry was stored. */
  ageSeconds(entry: CachedEntry): number {
    return Math.max(0, Math.floor((this.now() - entry.at) / 1000));
  }

  private async read(key: string): Promise<CachedEntry | undefined> {
    try {
      const raw = await this.store.get(key);
      if (raw === undefined) return undefined;
      const entry = JSON.parse(raw) as CachedEntry;
      this.bound.touch(key);
      return entry;
    } catch (e) {
      this.opts.onWarning?.('result cache unavailable: the call goes upstream', e);
      return undefined;
    }
  }

  private async write(key: string, result: ToolResult, ttlMs: number): Promise<void> {
    if (result.isError) return; // an error is never a good result to repeat
    const entry: CachedEntry = { result, at: this.now() };
    const raw = JSON.stringify(entry);
    if (Buffer.byteLength(raw) > this.maxBytes) return;
    try {
      await this.store.set(key, raw, ttlMs);
      for (const old of this.bound.touch(key)) await this.store.delete(old);
    } catch (e) {
      this.opts.onWarning?.('result cache unavailable: the result was not stored', e);
    }
  }
}
