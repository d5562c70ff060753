import { randomBytes } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport, type Server } from '@modelcontextprotocol/server';
import type { Caller } from '../auth/caller.js';
import { sessionKey } from '../auth/caller.js';
import { replayInto } from './session-replay.js';
import { suppressed } from './shared-stream.js';
import { bindSessionState, SessionState } from './session-state.js';
import { sessionHash, type InitParams, type RedisSessionStore, type SessionRecord } from './session-store.js';

export interface McpSession {
  readonly id: string;
  /** The id's digest: how Redis, the audit and the other replicas name the session. */
  readonly hash: string;
  /** The caller whose key opened the session: only that key may use it. */
  readonly callerId: string;
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly server: Server;
  /** Subscriptions and per-feature slots (shared through Redis when configured). */
  readonly state: SessionState;
  lastSeen: number;
  /** GET streams open now (server-initiated messages go there); an idle sweep spares a listening session. */
  streams: number;
  /** Shared: when this replica last renewed the session's expiry in Redis. */
  touchedAt: number;
  /** Shared: the log level replayed into this replica's Server. */
  appliedLevel?: string | undefined;
  /** Shared: ends this replica's GET stream of the session. */
  endStream?: (() => void) | undefined;
}

export interface SessionLimits {
  /** Sessions one caller may hold; opening one more closes its least recently used. */
  perCaller: number;
  /** A session with no request and no open stream for this long is closed. */
  idleMs: number;
  /** Sessions in all (all replicas with Redis): past it, an initialize is refused (503). */
  max: number;
}

/** mcp.sessions as the sessions take it. */
export function sessionLimits(cfg: { perCaller: number; max: number; idleSeconds: number }): SessionLimits {
  return { perCaller: cfg.perCaller, max: cfg.max, idleMs: cfg.idleSeconds * 1000 };
}

/** 192 random bits, URL-safe (visible ASCII, as the transport spec asks). */
const newSessionId = () => randomBytes(24).toString('base64url');

export type Opened = 'ok' | 'full';

/**
 * The MCP sessions. In memory (no `state.redis`) each lives in this replica only, bound to the
 * caller that opened it. With a shared store, the record in Redis is the session: a replica that
 * meets an id it does not hold rebuilds the transport and Server from it (the stored initialize
 * replayed, see session-replay.ts), and this replica's copies are a cache, checked against Redis
 * on every request (a session ended elsewhere is gone here too).
 */
export class McpSessions {
  private readonly byId = new Map<string, McpSession>();
  /** The ids of each caller's sessions here: the per-caller bound without a scan of every session. */
  private readonly byCaller = new Map<string, Set<string>>();
  private readonly restoring = new Map<string, Promise<McpSession>>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly build: (caller: Caller) => Server,
    private readonly limits: SessionLimits,
    readonly store?: RedisSessionStore,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, limits.idleMs / 2)).unref();
  }

  get size(): number {
    return this.byId.size;
  }

  /**
   * In memory, at the global bound: an initialize is refused before a Server is built for it
   * (503), unless the caller is at its own bound (its least recently used session makes room).
   * Open sessions are never evicted for a newcomer: a flood must not end the sessions of clients
   * already at work (with Redis, the store's script decides, see `settle`).
   */
  refuses(caller: Caller): boolean {
    if (this.store || this.byId.size < this.limits.max) return false;
    return (this.byCaller.get(sessionKey(caller))?.size ?? 0) < this.limits.perCaller;
  }

  /** Retry-After of a refused initialize: when the idlest session here (no open stream) times out, at least 1 s. */
  retryAfterSeconds(): number {
    let oldest = Infinity;
    for (const s of this.byId.values()) if (s.streams === 0 && s.lastSeen < oldest) oldest = s.lastSeen;
    const sweepMs = Math.min(60_000, this.limits.idleMs / 2);
    const ms = oldest === Infinity ? this.limits.idleMs : oldest + this.limits.idleMs + sweepMs - Date.now();
    return Math.max(1, Math.ceil(ms / 1000));
  }

  /**
   * A transport and server for a request that carries no session id. The SDK accepts only an
   * initialize there; it names the session, which is registered then. After the request the
   * caller must `settle`: it closes a server that opened no session, and registers the new one
   * in the shared store (`full` past the global bound: the session was closed again).
   */
  async open(caller: Caller, init: InitParams | undefined): Promise<{ transport: WebStandardStreamableHTTPServerTransport; settle: () => Promise<Opened> }> {
    const server = this.build(caller);
    const rec: SessionRecord = { callerKey: sessionKey(caller), init: init ?? { protocolVersion: '', capabilities: {}, clientInfo: {} }, subscriptions: [], slots: {} };
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: newSessionId,
      onsessioninitialized: (id): void => this.add(this.session(id, transport, server, rec), !this.store),
      onsessionclosed: (id) => void this.close(id),
    });
    this.wire(server, transport);
    await server.connect(transport);
    const settle = async (): Promise<Opened> => {
      const id = transport.sessionId;
      if (id === undefined) {
        await server.close();
        return 'ok';
      }
      if (!this.store) {
        if (this.byId.size <= this.limits.max) return 'ok';
        await this.drop(id);
        return 'full';
      }
      try {
        const out = await this.store.open(sessionHash(id), rec, this.limits.perCaller, this.limits.max);
        if (out === 'full') {
          await this.drop(id);
          return 'full';
        }
        for (const h of out) void this.endEverywhere(h);
        return 'ok';
      } catch (e) {
        await this.drop(id);
        throw e;
      }
    };
    return { transport, settle };
  }

  /** The session, for its own caller only: another key learns nothing, not even that it exists. */
  get(id: string, caller: Caller): McpSession | undefined {
    const s = this.byId.get(id);
    if (!s || s.callerId !== sessionKey(caller)) return undefined;
    s.lastSeen = Date.now();
    return s;
  }

  /** As `get`, and with a shared store: checked against Redis, rebuilt here when another replica opened it. */
  async resolve(id: string, caller: Caller): Promise<McpSession | undefined> {
    if (!this.store) return this.get(id, caller);
    const hash = sessionHash(id);
    const rec = await this.store.get(hash);
    const local = this.byId.get(id);
    if (!rec) {
      if (local) await this.drop(id);
      return undefined;
    }
    if (rec.callerKey !== sessionKey(caller)) return undefined;
    const s = local ?? (await this.restore(id, rec, caller));
    if (local) local.state.refresh(rec);
    if (rec.logLevel !== undefined && rec.logLevel !== s.appliedLevel) await this.applyLevel(s, rec.logLevel);
    s.lastSeen = Date.now();
    if (s.lastSeen - s.touchedAt > Math.min(60_000, this.limits.idleMs / 4)) {
      s.touchedAt = s.lastSeen;
      await this.store.touch(hash, rec);
    }
    return s;
  }

  /** `resources/subscribe` / `unsubscribe` seen on the session: kept in its state, so every replica knows what it listens to. */
  async noteSubscriptions(s: McpSession, change: { subscribe: string[]; unsubscribe: string[] }): Promise<void> {
    for (const uri of change.subscribe) s.state.subscriptions.add(uri);
    for (const uri of change.unsubscribe) s.state.subscriptions.delete(uri);
    await s.state.save();
  }

  /** A `logging/setLevel` seen on the session: kept in its state, so a rebuild elsewhere replays it. */
  async noteLevel(s: McpSession, level: string): Promise<void> {
    s.state.logLevel = level;
    s.appliedLevel = level;
    await s.state.save();
  }

  forEach(fn: (s: McpSession) => void): void {
    for (const s of this.byId.values()) fn(s);
  }

  /** Runs `fn` for each session here, once per session across replicas for the same `key` (e.g. a catalog's digest). */
  forEachOnce(key: string, fn: (s: McpSession) => void): void {
    for (const s of this.byId.values()) {
      if (!this.store) fn(s);
      else void this.store.once(s.hash, key).then((first) => first && fn(s), () => undefined);
    }
  }

  /** Ends the session (with a shared store: on every replica). */
  async close(id: string): Promise<void> {
    const s = this.byId.get(id);
    if (this.store) await this.store.remove(sessionHash(id), s?.callerId).catch(() => undefined);
    await this.drop(id);
  }

  /** Ends every session here and its open streams, so a shutdown is not held by them (shared ones live on in Redis). */
  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.byId.keys()].map((id) => (this.store ? this.drop(id) : this.close(id))));
  }

  /** Forgets this replica's copy (its Server and streams) only. */
  async drop(id: string): Promise<void> {
    const s = this.byId.get(id);
    if (!s) return;
    this.forget(id);
    s.endStream?.();
    await s.server.close().catch(() => undefined);
  }

  /** The session named by its hash ended elsewhere (or was evicted): gone here too. */
  async endEverywhere(hash: string): Promise<void> {
    await this.store?.remove(hash).catch(() => undefined);
    for (const s of this.byId.values()) if (s.hash === hash) await this.drop(s.id);
  }

  private session(id: string, transport: WebStandardStreamableHTTPServerTransport, server: Server, rec: SessionRecord): McpSession {
    const hash = sessionHash(id);
    const state = new SessionState(rec, async (r) => (this.store ? this.store.save(hash, r) : undefined));
    bindSessionState(server, state);
    return { id, hash, callerId: rec.callerKey, transport, server, state, lastSeen: Date.now(), streams: 0, touchedAt: Date.now() };
  }

  /**
   * With a shared store, a server-initiated message (no request it answers) goes to Redis: stored
   * for `Last-Event-ID` and published to whichever replica holds the session's GET stream.
   */
  private wire(server: Server, transport: WebStandardStreamableHTTPServerTransport): void {
    server.onclose = () => {
      const id = transport.sessionId;
      if (id !== undefined && this.byId.get(id)?.transport === transport) this.forget(id);
    };
    const store = this.store;
    if (!store) return;
    const send = transport.send.bind(transport);
    transport.send = async (message, options) => {
      const standalone = options?.relatedRequestId === undefined && !('id' in message && !('method' in message));
      if (!standalone || transport.sessionId === undefined) return send(message, options);
      const hash = sessionHash(transport.sessionId);
      if (await suppressed(store, hash, message as { method?: string; params?: { uri?: unknown } })) return;
      await store.deliver(hash, message);
    };
  }

  /** Rebuilds a session another replica opened: one rebuild per id at a time. */
  private restore(id: string, rec: SessionRecord, caller: Caller): Promise<McpSession> {
    const pending = this.restoring.get(id);
    if (pending) return pending;
    const p = (async () => {
      const server = this.build(caller);
      const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => id,
        onsessionclosed: (sid) => void this.close(sid),
      });
      this.wire(server, transport);
      await server.connect(transport);
      await replayInto(transport, id, rec.init);
      const s = this.session(id, transport, server, rec);
      this.add(s, false);
      if (rec.logLevel !== undefined) await this.applyLevel(s, rec.logLevel);
      return s;
    })().finally(() => this.restoring.delete(id));
    this.restoring.set(id, p);
    return p;
  }

  private async applyLevel(s: McpSession, level: string): Promise<void> {
    s.appliedLevel = level;
    await replayInto(s.transport, s.id, undefined, { method: 'logging/setLevel', params: { level } }).catch(() => undefined);
  }

  /** Keeps the caller's bound (in memory: it is the only copy) and this replica's cache bound. */
  private add(s: McpSession, bindCaller: boolean): void {
    const mine = this.byCaller.get(s.callerId);
    if (bindCaller && mine && mine.size >= this.limits.perCaller) {
      let oldest: McpSession | undefined;
      for (const id of mine) {
        const o = this.byId.get(id);
        if (o && (!oldest || o.lastSeen < oldest.lastSeen)) oldest = o;
      }
      if (oldest) void this.close(oldest.id);
    }
    if (this.store && this.byId.size >= this.limits.max) this.dropIdlest((o) => o.streams === 0);
    this.byId.set(s.id, s);
    if (mine) mine.add(s.id);
    else this.byCaller.set(s.callerId, new Set([s.id]));
  }

  private forget(id: string): void {
    const s = this.byId.get(id);
    if (!s) return;
    this.byId.delete(id);
    const mine = this.byCaller.get(s.callerId);
    mine?.delete(id);
    if (mine?.size === 0) this.byCaller.delete(s.callerId);
  }

  private dropIdlest(eligible: (s: McpSession) => boolean): void {
    let idlest: McpSession | undefined;
    for (const o of this.byId.values()) if (eligible(o) && (!idlest || o.lastSeen < idlest.lastSeen)) idlest = o;
    if (idlest) void (this.store ? this.drop(idlest.id) : this.close(idlest.id));
  }

  private sweep(): void {
    const before = Date.now() - this.limits.idleMs;
    for (const s of this.byId.values()) {
      if (s.streams > 0 && this.store) {
        s.touchedAt = Date.now();
        void this.store.touch(s.hash, s.state.record).catch(() => undefined); // a listening session stays alive everywhere
      } else if (s.streams === 0 && s.lastSeen < before) {
        if (!this.store) void this.close(s.id);
        // A copy whose Server holds subscriptions upstream stays while the session lives (their updates come through it).
        else if (s.state.subscriptions.size > 0) void this.store.get(s.hash).then((rec) => (rec ? undefined : this.drop(s.id)), () => undefined);
        else void this.drop(s.id);
      }
    }
  }
}
