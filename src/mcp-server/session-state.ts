import type { Server } from '@modelcontextprotocol/server';
import type { SessionRecord } from './session-store.js';

/**
 * The state of one 2025 `/mcp` session that features keep beside the SDK's: resource
 * subscriptions and named per-session slots (e.g. tool-search candidates). With `state.redis`
 * it is shared with every replica: change it, then `await save()` (a request that changed it on
 * another replica is seen here at this session's next request). In memory, `save()` does nothing.
 *
 * From a request handler of a session's Server: `sessionStateOf(server)`.
 */
export class SessionState {
  readonly subscriptions: Set<string>;
  private slots: Record<string, unknown>;

  constructor(
    private rec: SessionRecord,
    private readonly persist: (rec: SessionRecord) => Promise<void>,
  ) {
    this.subscriptions = new Set(rec.subscriptions);
    this.slots = { ...rec.slots };
  }

  /** A slot's value (JSON), or undefined. */
  get<T = unknown>(slot: string): T | undefined {
    return this.slots[slot] as T | undefined;
  }

  /** Sets a slot (a JSON value; undefined removes it). Call `save()` after. */
  set(slot: string, value: unknown): void {
    if (value === undefined) delete this.slots[slot];
    else this.slots[slot] = value;
  }

  get logLevel(): string | undefined {
    return this.rec.logLevel;
  }

  set logLevel(level: string | undefined) {
    this.rec = { ...this.rec, logLevel: level };
  }

  /** The record as stored (the subscriptions and slots as they are now). */
  get record(): SessionRecord {
    return { ...this.rec, subscriptions: [...this.subscriptions], slots: { ...this.slots } };
  }

  /** Takes what another replica saved. */
  refresh(rec: SessionRecord): void {
    this.rec = rec;
    this.subscriptions.clear();
    for (const uri of rec.subscriptions) this.subscriptions.add(uri);
    this.slots = { ...rec.slots };
  }

  /** Shares the state with the other replicas (Redis); nothing to do in memory. */
  save(): Promise<void> {
    return this.persist(this.record);
  }
}

const byServer = new WeakMap<Server, SessionState>();

/** The session state of the 2025 session a Server instance serves; undefined for /sse and 2026-07-28 servers. */
export function sessionStateOf(server: Server): SessionState | undefined {
  return byServer.get(server);
}

export function bindSessionState(server: Server, state: SessionState): void {
  byServer.set(server, state);
}
