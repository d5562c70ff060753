import { EventEmitter } from 'node:events';
import { GatewayError, isGatewayError } from '../errors.js';
import type { ProgressNote } from '../adapters/types.js';
import type { StateStore } from '../state/types.js';
import { newId } from '../util/ids.js';
import { FINISHED, withoutLease, type CallProgress, type CallRecord, type CallRecords } from './records.js';

/** What a long-running call's subscribers hear: its progress (throttled), then its end. */
export type CallEvent = { type: 'progress'; progress: CallProgress } | { type: 'done'; record: CallRecord };

export interface BackgroundOptions {
  leaseMs: number;
  progressIntervalMs: number;
  retentionMs: number;
  /** Counts a background call as work in flight; returns its release. */
  track?: () => () => void;
  /** Told when a call's end cannot be written down (the store is down): the call still ended. */
  onWarning?: (msg: string, err?: unknown) => void;
  /** Writes the audit record of a call found interrupted (its gateway stopped without saying so). */
  onInterrupted?: (record: CallRecord) => void;
}

interface Local {
  ac: AbortController;
  events: EventEmitter<{ event: [CallEvent] }>;
  lastProgressAt: number;
  pending: CallProgress | undefined;
  timer: NodeJS.Timeout | undefined;
  /** Every write of this call's record, in order (a lease renewal never overwrites the end). */
  writes: Promise<unknown>;
  done: Promise<void>;
}

const RUNNING_SET = 'toolgate:calls:running';
const cancelKey = (id: string) => `toolgate:call-cancel:${id}`;

/**
 * Long-running calls: started with a record in the state store (`running`, owned by this gateway
 * under a lease it renews), run in the background with their own AbortController, and ended with
 * their outcome in the record. A call whose owner stopped renewing (crash, kill) reads as
 * `interrupted`, and a sweep writes that down; a graceful shutdown interrupts its own calls at once.
 * Cancelling aborts the upstream work here, or, when another replica runs the call, leaves a mark
 * that its owner picks up within a second.
 */
export class BackgroundCalls {
  readonly instanceId = newId('g');
  private readonly local = new Map<string, Local>();
  private readonly ticker: NodeJS.Timeout;
  private lastRenew = 0;
  private lastSweep = 0;
  private closed = false;

  constructor(
    private readonly store: StateStore,
    private readonly records: CallRecords,
    private readonly opts: BackgroundOptions,
  ) {
    this.ticker = setInterval(() => void this.tick().catch((e) => opts.onWarning?.('long-running calls: upkeep failed', e)), Math.min(1000, opts.leaseMs / 3));
    this.ticker.unref();
  }

  get runningHere(): number {
    return this.local.size;
  }

  /**
   * Records the call as running and starts `run` in the background. Resolves once the record is
   * written (the 202 may then be sent); `run`'s outcome goes to the record and the subscribers.
   */
  async start(
    base: Pick<CallRecord, 'callId' | 'tool' | 'caller' | 'issuer' | 'subject' | 'sessionId'>,
    run: (signal: AbortSignal, onProgress: (p: ProgressNote) => void) => Promise<unknown>,
  ): Promise<void> {
    if (this.closed) throw new GatewayError('UNAVAILABLE', 'the gateway is shutting down', { retryAfterSeconds: 1 });
    const now = new Date().toISOString();
    const record: CallRecord = { ...base, status: 'running', async: true, createdAt: now, updatedAt: now, owner: this.instanceId, leaseUntil: Date.now() + this.opts.leaseMs };
    await this.records.put(record);
    await this.store.addToSet(RUNNING_SET, base.callId);
    const local: Local = { ac: new AbortController(), events: new EventEmitter(), lastProgressAt: 0, pending: undefined, timer: undefined, writes: Promise.resolve(), done: Promise.resolve() };
    local.events.setMaxListeners(0);
    this.local.set(base.callId, local);
    const release = this.opts.track?.();
    local.done = run(local.ac.signal, (p) => this.progress(base.callId, local, p)).then(
      (response) => this.end(base.callId, local, { status: 'ok', response }),
      (e: unknown) => {
        const err = isGatewayError(e) ? e : new GatewayError('INTERNAL', 'the call failed inside the gateway');
        const status = err.code === 'CANCELLED' ? 'cancelled' : err.code === 'INTERRUPTED' ? 'interrupted' : 'error';
        return this.end(base.callId, local, { status, error: err.toBody().error });
      },
    ).finally(() => release?.());
  }

  /** Listens to a call running on this gateway; undefined when it runs elsewhere or has ended. */
  subscribe(callId: string, listener: (e: CallEvent) => void): (() => void) | undefined {
    const local = this.local.get(callId);
    if (!local) return undefined;
    local.events.on('event', listener);
    return () => local.events.off('event', listener);
  }

  /** Cancels a running call: at once when it runs here, else through a mark its owner reads. */
  async cancel(callId: string): Promise<'cancelled' | 'requested'> {
    const local = this.local.get(callId);
    if (local) {
      local.ac.abort(new GatewayError('CANCELLED', 'the call was cancelled by DELETE /v1/calls/{callId}; the upstream work was aborted'));
      await local.done;
      return 'cancelled';
    }
    await this.store.set(cancelKey(callId), '1', this.opts.leaseMs * 2);
    return 'requested';
  }

  /**
   * A record as readers should see it: a running call whose owner let its lease lapse is
   * interrupted (and written down as such, once).
   */
  async settle(record: CallRecord): Promise<CallRecord> {
    if (record.status !== 'running' || !record.async || (record.leaseUntil ?? Infinity) > Date.now()) return record;
    if (this.local.has(record.callId)) return record;
    return (await this.markInterrupted(record)) ?? record;
  }

  /** Interrupts the calls running here (shutdown): each ends as `interrupted`, written down. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.ticker);
    const ends = [...this.local.values()].map((l) => {
      l.ac.abort(new GatewayError('INTERRUPTED', 'the gateway shut down while the call was running; the upstream work was aborted'));
      return l.done;
    });
    await Promise.allSettled(ends);
  }

  private progress(callId: string, local: Local, p: ProgressNote): void {
    if (local.ac.signal.aborted) return;
    local.pending = { progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), ...(p.message !== undefined ? { message: p.message } : {}), at: new Date().toISOString() };
    if (local.timer) return; // a trailing event is already due
    const wait = local.lastProgressAt + this.opts.progressIntervalMs - Date.now();
    if (wait <= 0) this.flushProgress(callId, local);
    else local.timer = setTimeout(() => this.flushProgress(callId, local), wait);
  }

  private flushProgress(callId: string, local: Local): void {
    local.timer = undefined;
    const progress = local.pending;
    if (!progress || local.ac.signal.aborted) return;
    local.pending = undefined;
    local.lastProgressAt = Date.now();
    local.events.emit('event', { type: 'progress', progress });
    this.write(local, () => this.records.update(callId, { progress }));
  }

  private async end(callId: string, local: Local, change: Partial<CallRecord>): Promise<void> {
    clearTimeout(local.timer);
    let record: CallRecord | undefined;
    this.write(local, async () => {
      const cur = await this.records.get(callId);
      if (!cur) return;
      record = { ...withoutLease(cur), ...change, updatedAt: new Date().toISOString() };
      await this.records.put(record, this.opts.retentionMs);
    });
    await local.writes;
    this.local.delete(callId);
    await Promise.allSettled([this.store.removeFromSet(RUNNING_SET, callId), this.store.delete(cancelKey(callId))]);
    if (record) local.events.emit('event', { type: 'done', record });
    local.events.removeAllListeners();
  }

  private write(local: Local, op: () => Promise<unknown>): void {
    local.writes = local.writes.then(op).catch((e) => this.opts.onWarning?.('long-running call: its record could not be written', e));
  }

  /** Every second: cancel marks for our calls; lease renewals and the sweep when due. */
  private async tick(): Promise<void> {
    const now = Date.now();
    for (const [callId, local] of this.local) {
      if ((await this.store.get(cancelKey(callId))) !== undefined) {
        local.ac.abort(new GatewayError('CANCELLED', 'the call was cancelled by DELETE /v1/calls/{callId}; the upstream work was aborted'));
      }
    }
    if (now - this.lastRenew >= this.opts.leaseMs / 3) {
      this.lastRenew = now;
      for (const [callId, local] of this.local) {
        this.write(local, () => this.records.update(callId, { leaseUntil: Date.now() + this.opts.leaseMs }));
      }
    }
    if (now - this.lastSweep >= this.opts.leaseMs) {
      this.lastSweep = now;
      await this.sweep();
    }
  }

  /** Calls left running by a gateway that stopped without saying so: interrupted, written down. */
  async sweep(): Promise<void> {
    for (const callId of await this.store.members(RUNNING_SET)) {
      if (this.local.has(callId)) continue;
      const record = await this.records.get(callId);
      if (!record || FINISHED.has(record.status)) await this.store.removeFromSet(RUNNING_SET, callId);
      else if ((record.leaseUntil ?? 0) < Date.now()) await this.markInterrupted(record);
    }
  }

  private async markInterrupted(record: CallRecord): Promise<CallRecord | undefined> {
    // Claimed once across readers and replicas, so the interruption is audited once.
    if (!(await this.store.setIfAbsent(`toolgate:call-interrupted:${record.callId}`, '1', this.opts.retentionMs))) return this.records.get(record.callId);
    const err = new GatewayError('INTERRUPTED', 'the gateway running this call stopped before it finished');
    const next: CallRecord = { ...withoutLease(record), status: 'interrupted', error: err.toBody().error, updatedAt: new Date().toISOString() };
    await this.records.put(next, this.opts.retentionMs);
    await this.store.removeFromSet(RUNNING_SET, record.callId);
    this.opts.onInterrupted?.(next);
    return next;
  }
}
