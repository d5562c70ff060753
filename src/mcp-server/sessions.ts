import { randomBytes } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport, type Server } from '@modelcontextprotocol/server';
import type { Caller } from '../auth/caller.js';
import { sessionKey } from '../auth/caller.js';

export interface McpSession {
  readonly id: string;
  /** The caller whose key opened the session: only that key may use it. */
  readonly callerId: string;
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly server: Server;
  lastSeen: number;
  /** GET streams open now (server-initiated messages go there); an idle sweep spares a listening session. */
  streams: number;
}

export interface SessionLimits {
  /** Sessions one caller may hold; opening one more closes its least recently used. */
  perCaller: number;
  /** A session with no request and no open stream for this long is closed. */
  idleMs: number;
}

/** 192 random bits, URL-safe (visible ASCII, as the transport spec asks). */
const newSessionId = () => randomBytes(24).toString('base64url');

/**
 * The MCP sessions of this replica: each its own transport and Server, bound to the caller that
 * opened it. Sessions live in memory, so a client must stay on one replica (sticky sessions).
 */
export class McpSessions {
  private readonly byId = new Map<string, McpSession>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly build: (caller: Caller) => Server,
    private readonly limits: SessionLimits,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, limits.idleMs)).unref();
  }

  get size(): number {
    return this.byId.size;
  }

  /**
   * A transport and server for a request that carries no session id. The SDK accepts only an
   * initialize there; it names the session, which is registered then. Without a session id after
   * the request, the caller must close it (`settle`).
   */
  async open(caller: Caller): Promise<{ transport: WebStandardStreamableHTTPServerTransport; settle: () => Promise<void> }> {
    const server = this.build(caller);
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: newSessionId,
      onsessioninitialized: (id): void => this.add({ id, callerId: sessionKey(caller), transport, server, lastSeen: Date.now(), streams: 0 }),
      onsessionclosed: (id) => void this.close(id),
    });
    server.onclose = () => {
      if (transport.sessionId) this.byId.delete(transport.sessionId);
    };
    await server.connect(transport);
    return { transport, settle: async () => (transport.sessionId === undefined ? server.close() : undefined) };
  }

  /** The session, for its own caller only: another key learns nothing, not even that it exists. */
  get(id: string, caller: Caller): McpSession | undefined {
    const s = this.byId.get(id);
    if (!s || s.callerId !== sessionKey(caller)) return undefined;
    s.lastSeen = Date.now();
    return s;
  }

  forEach(fn: (s: McpSession) => void): void {
    for (const s of this.byId.values()) fn(s);
  }

  async close(id: string): Promise<void> {
    const s = this.byId.get(id);
    if (!s) return;
    this.byId.delete(id);
    await s.server.close().catch(() => undefined);
  }

  /** Ends every session and its open streams, so a shutdown is not held by them. */
  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.byId.keys()].map((id) => this.close(id)));
  }

  private add(s: McpSession): void {
    const mine = [...this.byId.values()].filter((o) => o.callerId === s.callerId);
    if (mine.length >= this.limits.perCaller) {
      const oldest = mine.reduce((a, b) => (b.lastSeen < a.lastSeen ? b : a));
      void this.close(oldest.id);
    }
    this.byId.set(s.id, s);
  }

  private sweep(): void {
    const before = Date.now() - this.limits.idleMs;
    for (const s of this.byId.values()) if (s.streams === 0 && s.lastSeen < before) void this.close(s.id);
  }
}
