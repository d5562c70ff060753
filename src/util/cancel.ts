const noop = (): void => undefined;

export type AbortListener = (reason: Error) => void;

/** An object told when a Cancel aborts: what hot paths listen with (no closure per call). */
export interface CancelListener {
  cancelled(reason: Error): void;
}

/**
 * One call's cancellation (deadline, caller gone, a try's own limit). It does the job of an
 * AbortController without an EventTarget: on the hot path a controller plus an `abort` listener
 * per request cost ~25 µs of CPU and kept each request's upstream objects alive through young-GC
 * cycles (measured in docs/benchmarks.md). Code that needs a standard AbortSignal (the MCP SDK,
 * node:timers) takes `signal`, made on first use and aborted with the same reason.
 */
export class Cancel {
  private why: Error | undefined;
  private listeners: (AbortListener | CancelListener)[] | undefined;
  private controller: AbortController | undefined;

  get aborted(): boolean {
    return this.why !== undefined;
  }

  get reason(): Error | undefined {
    return this.why;
  }

  /** Aborts with `reason` (the first reason wins); listeners run once, in order. */
  abort(reason: Error): void {
    if (this.why !== undefined) return;
    this.why = reason;
    this.controller?.abort(reason);
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners) {
      for (const l of listeners) {
        if (typeof l === 'function') l(reason);
        else l.cancelled(reason);
      }
    }
  }

  /** Tells `l` once when this aborts (at once when it already has), until `unlisten(l)`. */
  listen(l: CancelListener): void {
    if (this.why !== undefined) l.cancelled(this.why);
    else (this.listeners ??= []).push(l);
  }

  unlisten(l: AbortListener | CancelListener): void {
    const i = this.listeners?.indexOf(l) ?? -1;
    if (i >= 0) this.listeners?.splice(i, 1);
  }

  /** Calls `fn` once when this aborts (at once when it already has); returns the release (for paths off the per-call one). */
  onAbort(fn: AbortListener): () => void {
    if (this.why !== undefined) {
      fn(this.why);
      return noop;
    }
    (this.listeners ??= []).push(fn);
    return () => this.unlisten(fn);
  }

  /** A standard AbortSignal that aborts with this (made on first use). */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.why !== undefined) this.controller.abort(this.why);
    }
    return this.controller.signal;
  }

  /**
   * A cancel that aborts with this one, or on its own after `ms` with `onTimeout()`'s error.
   * `release()` detaches it when its work is done.
   */
  child(ms: number, onTimeout: () => Error): { cancel: Cancel; release: () => void } {
    const cancel = new Cancel();
    const detach = this.onAbort((reason) => cancel.abort(reason));
    const timer = setTimeout(() => cancel.abort(onTimeout()), ms);
    return {
      cancel,
      release: () => {
        clearTimeout(timer);
        detach();
      },
    };
  }
}

/** Waits `ms`, or rejects with the cancel's reason as soon as it aborts. */
export function sleep(ms: number, cancel: Cancel): Promise<void> {
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const release = cancel.onAbort((reason) => {
      clearTimeout(timer);
      reject(reason);
    });
    if (cancel.aborted) return;
    timer = setTimeout(() => {
      release();
      resolve();
    }, ms);
  });
}
