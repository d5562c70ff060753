/**
 * What a session's last find_tools left behind: the candidates its tools/list shows. A plain,
 * serializable record (JSON), so that a shared store (Redis, for /mcp sessions on any replica)
 * can hold it as well as this replica's memory.
 */
export interface SearchRecord {
  /** Canonical tool names, best first. */
  tools: string[];
  /** When the search ran (ms since the epoch). */
  at: number;
}

/** Where session candidates live, keyed by the session tag (sessionTag(): a digest, never the live session id). */
export interface SearchStateStore {
  get(sessionTag: string): Promise<SearchRecord | undefined>;
  set(sessionTag: string, record: SearchRecord): Promise<void>;
  delete(sessionTag: string): Promise<void>;
}

export interface MemoryStoreLimits {
  /** Records kept at most; past it the least recently used goes. */
  maxEntries: number;
  /** A record not read or written for this long is dropped (a session's own idle limit). */
  idleMs: number;
}

/** The store of one replica: bounded in count and in idle time. */
export class MemorySearchStore implements SearchStateStore {
  private readonly byTag = new Map<string, { record: SearchRecord; seen: number }>();

  constructor(
    private readonly limits: MemoryStoreLimits = { maxEntries: 10_000, idleMs: 30 * 60 * 1000 },
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.byTag.size;
  }

  get(tag: string): Promise<SearchRecord | undefined> {
    const e = this.byTag.get(tag);
    if (!e) return Promise.resolve(undefined);
    if (this.now() - e.seen > this.limits.idleMs) {
      this.byTag.delete(tag);
      return Promise.resolve(undefined);
    }
    this.touch(tag, e.record);
    return Promise.resolve(e.record);
  }

  set(tag: string, record: SearchRecord): Promise<void> {
    this.touch(tag, record);
    while (this.byTag.size > this.limits.maxEntries) this.byTag.delete(this.byTag.keys().next().value as string);
    return Promise.resolve();
  }

  delete(tag: string): Promise<void> {
    this.byTag.delete(tag);
    return Promise.resolve();
  }

  /** Moves the record to the end of the Map's order (most recently used). */
  private touch(tag: string, record: SearchRecord): void {
    this.byTag.delete(tag);
    this.byTag.set(tag, { record, seen: this.now() });
  }
}
