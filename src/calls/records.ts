import type { ErrorBody } from '../errors.js';
import type { StateStore } from '../state/types.js';

export type CallStatus = 'pending_confirmation' | 'running' | 'ok' | 'error' | 'rejected' | 'expired' | 'interrupted' | 'cancelled';

/** The last progress an upstream reported for a long-running call. */
export interface CallProgress {
  progress: number;
  total?: number | undefined;
  message?: string | undefined;
  at: string;
}

/** What GET /v1/calls/{callId} shows: a gated (or long-running) call from its start to its result. */
export interface CallRecord {
  callId: string;
  tool: string;
  caller: string;
  /** A token caller's issuer: with `caller`, who may read the call. */
  issuer?: string;
  /** The token's subject when the caller id is another claim: with `caller`, who may read the call. */
  subject?: string;
  sessionId?: string | undefined;
  status: CallStatus;
  /** Ran in the background (`async: true` or `Prefer: respond-async`). */
  async?: boolean;
  confirmationId?: string;
  approver?: string;
  createdAt: string;
  updatedAt: string;
  /** While running in the background: the gateway running it, and until when it vouches for it. */
  owner?: string;
  leaseUntil?: number;
  progress?: CallProgress;
  /** The 200 body of a finished call. */
  response?: unknown;
  error?: ErrorBody['error'];
}

/** A record without the running gateway's bookkeeping (owner, lease): what readers see, and what a finished call keeps. */
export function withoutLease(record: CallRecord): CallRecord {
  const out = { ...record };
  delete out.owner;
  delete out.leaseUntil;
  return out;
}

export const FINISHED: ReadonlySet<CallStatus> = new Set(['ok', 'error', 'rejected', 'expired', 'interrupted', 'cancelled']);

/** Call records in the state store, kept for `retentionMs` after their last change. */
export class CallRecords {
  constructor(
    private readonly store: StateStore,
    private readonly retentionMs: number,
  ) {}

  private key(id: string): string {
    return `toolgate:call:${id}`;
  }

  async put(record: CallRecord, retentionMs = this.retentionMs): Promise<void> {
    await this.store.set(this.key(record.callId), JSON.stringify(record), retentionMs);
  }

  async get(callId: string): Promise<CallRecord | undefined> {
    const raw = await this.store.get(this.key(callId));
    return raw === undefined ? undefined : (JSON.parse(raw) as CallRecord);
  }

  async update(callId: string, change: Partial<CallRecord>, retentionMs = this.retentionMs): Promise<CallRecord | undefined> {
    const cur = await this.get(callId);
    if (!cur) return undefined;
    const next = { ...cur, ...change, updatedAt: new Date().toISOString() };
    await this.put(next, retentionMs);
    return next;
  }
}
