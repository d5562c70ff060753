import type { Cancel } from '../util/cancel.js';
import { McpPoolError } from './errors.js';

interface Waiter {
  grant: () => void;
  fail: (err: McpPoolError) => void;
}

const GRANTED: Promise<void> = Promise.resolve();

/** Hint for Retry-After when a server is saturated: slots free up as calls finish. */
const BUSY_RETRY_AFTER_MS = 1000;

/**
 * Bounds the calls in flight on one server's session: up to `maxInFlight` run, up to
 * `maxQueue` wait (first come, first served) within their deadline, the rest fail at once.
 * Every failure here is `unavailable` with `mayHaveReachedServer: false`.
 */
export class Limiter {
  private active = 0;
  private readonly waiting: Waiter[] = [];

  constructor(
    private readonly server: string,
    private maxInFlight: number,
    private maxQueue: number,
  ) {}

  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** Applies new bounds without dropping anyone; extra room is handed out at once. */
  resize(maxInFlight: number, maxQueue: number): void {
    this.maxInFlight = maxInFlight;
    this.maxQueue = maxQueue;
    this.dispatch();
  }

  /**
   * Resolves once a slot is taken for the caller, who gives it back with `release()` exactly once
   * (no release function per call: the free slot's path is the per-call one). Rejects when the
   * queue is full, the deadline passes first, or the signal aborts.
   */
  acquire(deadline: number, cancel?: Cancel): Promise<void> {
    if (cancel?.aborted) return Promise.reject(this.error('aborted', 'the call was aborted before it started'));
    if (this.active < this.maxInFlight && this.waiting.length === 0) {
      this.active++;
      return GRANTED;
    }
    if (this.waiting.length >= this.maxQueue) {
      return Promise.reject(
        this.error('unavailable', `MCP server '${this.server}' is busy: ${this.active} calls in flight and ${this.waiting.length} queued (limits ${this.maxInFlight}/${this.maxQueue})`),
      );
    }
    return new Promise((resolve, reject) => {
      let unhook: (() => void) | undefined;
      const settle = (): void => {
        clearTimeout(timer);
        unhook?.();
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
      };
      const waiter: Waiter = {
        grant: () => {
          settle();
          resolve();
        },
        fail: (err) => {
          settle();
          reject(err);
        },
      };
      const onAbort = (): void => waiter.fail(this.error('aborted', 'the call was aborted while queued'));
      const timer = setTimeout(
        () => waiter.fail(this.error('unavailable', `MCP server '${this.server}' is busy: no free slot before the call's deadline`)),
        Math.max(0, deadline - Date.now()),
      );
      this.waiting.push(waiter);
      unhook = cancel?.onAbort(onAbort);
    });
  }

  /** Gives back a slot taken by `acquire` (once per acquire). */
  release(): void {
    this.active--;
    this.dispatch();
  }

  private dispatch(): void {
    while (this.active < this.maxInFlight && this.waiting.length > 0) {
      const next = this.waiting[0]!;
      this.active++;
      next.grant();
    }
  }

  private error(kind: 'aborted' | 'unavailable', message: string): McpPoolError {
    return new McpPoolError(kind, message, {
      server: this.server,
      mayHaveReachedServer: false,
      ...(kind === 'unavailable' ? { retryAfterMs: BUSY_RETRY_AFTER_MS } : {}),
    });
  }
}
