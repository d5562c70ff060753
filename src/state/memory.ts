import type { StateStore } from './types.js';

interface Entry {
  value: string;
  expiresAt: number;
}

/** The in-memory store: one process, one gateway. Expiry is checked on read and swept now and then. */
export class MemoryStore implements StateStore {
  private readonly map = new Map<string, Entry>();
  private readonly sets = new Map<string, Set<string>>();
  private ops = 0;

  constructor(private readonly now: () => number = Date.now) {}

  private live(key: string): Entry | undefined {
    const e = this.map.get(key);
    if (e && e.expiresAt <= this.now()) {
      this.map.delete(key);
      return undefined;
    }
    return e;
  }

  private sweep(): void {
    if (++this.ops % 1024 !== 0) return;
    const t = this.now();
    for (const [k, e] of this.map) if (e.expiresAt <= t) this.map.delete(k);
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    this.sweep();
    if (this.live(key)) return false;
    this.map.set(key, { value, expiresAt: this.now() + ttlMs });
    return true;
  }

  async get(key: string): Promise<string | undefined> {
    return this.live(key)?.value;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    this.sweep();
    this.map.set(key, { value, expiresAt: this.now() + ttlMs });
  }

  async delete(key: string): Promise<void> {
    this.map.delete(key);
  }

  async increment(key: string, windowMs: number): Promise<number> {
    this.sweep();
    const e = this.live(key);
    if (!e) {
      this.map.set(key, { value: '1', expiresAt: this.now() + windowMs });
      return 1;
    }
    e.value = String(Number(e.value) + 1);
    return Number(e.value);
  }

  async addToSet(key: string, member: string): Promise<void> {
    let set = this.sets.get(key);
    if (!set) this.sets.set(key, (set = new Set()));
    set.add(member);
  }

  async removeFromSet(key: string, member: string): Promise<void> {
    this.sets.get(key)?.delete(member);
  }

  async members(key: string): Promise<string[]> {
    return [...(this.sets.get(key) ?? [])];
  }

  async ttl(key: string): Promise<number | undefined> {
    const e = this.live(key);
    return e ? e.expiresAt - this.now() : undefined;
  }

  async close(): Promise<void> {
    this.map.clear();
    this.sets.clear();
  }
}
