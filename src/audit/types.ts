import type { AuditFilter, AuditPage } from './query.js';

/** One audit record (SPEC §4): one JSON line in the file sink, one entry in the Redis stream. */
export interface AuditRecord {
  id: string;
  ts: string;
  event?: 'call' | 'reload' | 'confirmation' | 'admin' | 'server_request';
  requestId?: string;
  callId?: string;
  sessionId?: string | undefined;
  caller?: string;
  /** A token caller's issuer, subject and client (absent for API keys). */
  subject?: string;
  clientId?: string;
  issuer?: string;
  tool?: string;
  backend?: string | undefined;
  attempts?: number;
  args?: unknown;
  argsDigest?: string;
  outcome?: 'ok' | 'error' | 'pending_confirmation' | 'accepted' | 'approved' | 'rejected' | 'expired' | 'fallback' | 'refused' | 'cancelled';
  errorCode?: string | undefined;
  durationMs?: number;
  responseHash?: string | undefined;
  confirmationId?: string;
  approver?: string;
  policy?: Record<string, unknown>;
  [key: string]: unknown;
}

/**
 * Where audit records go. `write` never throws and never loses a record once it returned:
 * a sink buffers, and `flush`/`close` wait until everything written so far is durable.
 */
export interface AuditSink {
  write(record: AuditRecord): void;
  /** Writes the record and resolves once it is durable: decisions are recorded before they act. */
  durable(record: AuditRecord): Promise<void>;
  flush(): Promise<void>;
  close(): Promise<void>;
  /** Reads records back, newest first (GET /v1/audit); a write-only sink leaves it out. */
  query?(filter: AuditFilter): Promise<AuditPage>;
}
