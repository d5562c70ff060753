/**
 * Remembers the cache keys this process wrote, oldest first, and names the one to evict once
 * there are more than `max`: the store expires keys by TTL, this bounds how many live at once.
 */
export class KeyBound {
  private readonly keys = new Map<string, true>();

  constructor(private readonly max: number) {}

  /** Marks `key` as most recent; returns the keys to delete from the store. */
  touch(key: string): string[] {
    this.keys.delete(key);
    this.keys.set(key, true);
    const evicted: string[] = [];
    for (const old of this.keys.keys()) {
      if (this.keys.size <= this.max) break;
      this.keys.delete(old);
      evicted.push(old);
    }
    return evicted;
  }

  get size(): number {
    return this.keys.size;
  }
}
