/**
 * The two bounds on a flood of find_tools calls: a token bucket per session (or per caller where
 * there is no session), and at most one `notifications/tools/list_changed` per interval per
 * session, the last one of a burst sent when the interval is over (trailing edge), so a burst of
 * searches ends with the list the client must read, and never a storm.
 */

export interface BucketLimits {
  /** Searches allowed at once. */
  burst: number;
  /** Searches regained per second. */
  perSecond: number;
  /** Buckets kept at most (full ones are dropped first: a full bucket is the default). */
  maxKeys: number;
}

export class SearchRate {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly limits: BucketLimits = { burst: 10, perSecond: 0.5, maxKeys: 10_000 },
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes one search for `key`: 0 when allowed, else the seconds to wait for the next one. */
  take(key: string): number {
    const t = this.now();
    const b = this.buckets.get(key) ?? { tokens: this.limits.burst, at: t };
    b.tokens = Math.min(this.limits.burst, b.tokens + ((t - b.at) / 1000) * this.limits.perSecond);
    b.at = t;
    this.buckets.delete(key);
    this.buckets.set(key, b);
    this.prune();
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.limits.perSecond));
  }

  private prune(): void {
    if (this.buckets.size <= this.limits.maxKeys) return;
    // The oldest first (Map order is last use); a bucket refilled by now loses nothing by going.
    for (const key of this.buckets.keys()) {
      if (this.buckets.size <= this.limits.maxKeys) break;
      this.buckets.delete(key);
    }
  }
}

/** How a session hears that its list changed: now (on the request's own stream when there is one), or later (its standalone stream). */
export interface ListChangedSink {
  now(): void;
  later(): void;
}

export class ListChangedCoalescer {
  private readonly bySession = new Map<string, { last: number; timer?: NodeJS.Timeout; sink: ListChangedSink }>();

  constructor(
    private readonly intervalMs = 250,
    private readonly now: () => number = Date.now,
  ) {}

  /** The session's list changed: told now if the last notice is older than the interval, else once when it is over. */
  changed(session: string, sink: ListChangedSink): void {
    const t = this.now();
    const s = this.bySession.get(session);
    if (s?.timer) {
      s.sink = sink; // the trailing notice goes to the latest sink
      return;
    }
    if (!s || t - s.last >= this.intervalMs) {
      this.bySession.set(session, { last: t, sink });
      sink.now();
      this.prune(t);
      return;
    }
    s.sink = sink;
    s.timer = setTimeout(() => {
      s.timer = undefined;
      s.last = this.now();
      s.sink.later();
    }, s.last + this.intervalMs - t);
    s.timer.unref();
  }

  /** Stops pending notices (shutdown). */
  close(): void {
    for (const s of this.bySession.values()) if (s.timer) clearTimeout(s.timer);
    this.bySession.clear();
  }

  /** Sessions whose last notice is past the interval need no memory. */
  private prune(t: number): void {
    if (this.bySession.size < 1024) return;
    for (const [k, s] of this.bySession) if (!s.timer && t - s.last >= this.intervalMs) this.bySession.delete(k);
  }
}
