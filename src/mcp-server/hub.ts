import { ProtocolError, ProtocolErrorCode, type LoggingLevel, type Server } from '@modelcontextprotocol/server';
import type { Caller } from '../auth/caller.js';
import type { PassthroughEvent } from '../mcp/passthrough.js';
import { describeError } from '../mcp/errors.js';
import { PASSTHROUGH_TIMEOUT_MS, type ServerView, type UpstreamCatalog } from './upstream.js';
import { seesServer } from './visibility.js';
import { gatewayUri } from './uris.js';

const LEVELS: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
const severity = (l: string) => LEVELS.indexOf(l as LoggingLevel);

/** One 2025-era downstream session (or /sse stream): what it subscribed to and the log level it asked for. */
export interface Downstream {
  readonly server: Server;
  readonly caller: Caller;
  /** Listed URI → the server and its own URI. */
  readonly subscriptions: Map<string, { server: string; upstream: string }>;
  level: LoggingLevel | undefined;
}

/** What 2026-07-28 listen streams are told through (the SDK's notifier of /mcp's stateless handler). */
export interface ModernNotifier {
  resourcesChanged(): void;
  promptsChanged(): void;
  resourceUpdated(uri: string): void;
}

/**
 * The passthrough's fan-out: subscriptions held upstream once per URI (reference-counted over
 * every downstream session and listen stream that asked), and each server notification passed
 * on only to the sessions that may hear it:
 * - `resources/updated` to the sessions subscribed to that URI (2026-07-28: the listen streams
 *   that named it, which were checked for visibility when they opened);
 * - `list_changed` to every session whose caller may see something of that server;
 * - `notifications/message` to the sessions that set a level (at or below the message's) and may
 *   see that server. The upstream gets the most verbose level any such session asked for; each
 *   session's own level filters what it is sent. A server's message carries no link to the
 *   request it belongs to over the pool's shared session, so none goes to a session that set
 *   no level, and never to a caller who cannot see the server.
 */
export class PassthroughHub {
  private readonly sessions = new Set<Downstream>();
  /** server → its own URI → holders. */
  private readonly held = new Map<string, Map<string, number>>();
  /** server → the level it was last sent. */
  private readonly levels = new Map<string, LoggingLevel>();
  private readonly sweeper: NodeJS.Timeout;
  modern: ModernNotifier | undefined;

  constructor(
    private readonly catalog: UpstreamCatalog,
    private readonly warn: (msg: string, fields: object) => void,
  ) {
    this.sweeper = setInterval(() => this.sweep(), 30_000).unref();
  }

  /**
   * A new session's Server. Its passthrough state ends with it: every way a session ends (DELETE,
   * the transport closing, eviction of a caller's oldest or an idle one, a /sse stream closing,
   * a request that opened no session) closes its Server, which detaches it here.
   */
  attach(server: Server, caller: Caller): Downstream {
    const d: Downstream = { server, caller, subscriptions: new Map(), level: undefined };
    this.sessions.add(d);
    const close = server.close.bind(server);
    server.close = async () => {
      this.detach(d);
      await close();
    };
    return d;
  }

  /** Releases the session's subscriptions (upstream unsubscribe where no other holder is left) and forgets it. */
  detach(d: Downstream): void {
    if (!this.sessions.delete(d)) return;
    for (const { server, upstream } of d.subscriptions.values()) this.release(server, upstream);
    d.subscriptions.clear();
  }

  /** Sessions attached now, and URIs held upstream per server (tests: nothing is left behind). */
  get stats(): { sessions: number; held: Record<string, string[]> } {
    const held: Record<string, string[]> = {};
    for (const [server, uris] of this.held) if (uris.size > 0) held[server] = [...uris.keys()];
    return { sessions: this.sessions.size, held };
  }

  close(): void {
    clearInterval(this.sweeper);
  }

  /** Takes a reference on the server's URI; the first one subscribes upstream. */
  async hold(server: string, upstream: string): Promise<void> {
    let uris = this.held.get(server);
    if (!uris) this.held.set(server, (uris = new Map()));
    const n = uris.get(upstream) ?? 0;
    uris.set(upstream, n + 1);
    if (n === 0) {
      try {
        await this.subscribeUpstream(server, upstream);
      } catch (e) {
        this.release(server, upstream, false);
        throw e;
      }
    }
  }

  release(server: string, upstream: string, unsubscribe = true): void {
    const uris = this.held.get(server);
    const n = uris?.get(upstream);
    if (!uris || n === undefined) return;
    if (n > 1) return void uris.set(upstream, n - 1);
    uris.delete(upstream);
    if (unsubscribe) void this.unsubscribeUpstream(server, upstream).catch(() => undefined);
  }

  /** A downstream session asked for a log level: the servers it may see get the most verbose level asked. */
  async setLevel(d: Downstream, level: LoggingLevel): Promise<void> {
    d.level = level;
    await Promise.all(this.catalog.servers().filter((v) => seesServer(d.caller, v.prefix)).map((v) => this.applyLevel(v)));
  }

  /** A server notification, passed on as the class comment says. */
  onEvent(e: PassthroughEvent): void {
    const view = this.catalog.byName(e.server);
    if (!view) return;
    const n = e.notification;
    if (n.method === 'notifications/resources/updated') {
      const listed = gatewayUri(view.prefix, n.params.uri);
      for (const d of this.live()) if (d.subscriptions.has(listed)) void d.server.sendResourceUpdated({ uri: listed }).catch(() => undefined);
      this.modern?.resourceUpdated(listed);
    } else if (n.method === 'notifications/resources/list_changed') {
      this.catalog.invalidate(e.server, 'resources');
      for (const d of this.seeing(view)) void d.server.sendResourceListChanged().catch(() => undefined);
      this.modern?.resourcesChanged();
    } else if (n.method === 'notifications/prompts/list_changed') {
      this.catalog.invalidate(e.server, 'prompts');
      for (const d of this.seeing(view)) void d.server.sendPromptListChanged().catch(() => undefined);
      this.modern?.promptsChanged();
    } else {
      const { level, logger, data } = n.params;
      const params = { level: level as LoggingLevel, data, logger: logger === undefined ? view.name : `${view.name}/${logger}` };
      for (const d of this.seeing(view)) {
        if (d.level !== undefined && severity(level) >= severity(d.level)) void d.server.notification({ method: 'notifications/message', params }).catch(() => undefined);
      }
    }
  }

  /** A server's session started again: its subscriptions and log level are sent again. */
  async restore(server: string): Promise<void> {
    this.levels.delete(server);
    const view = this.catalog.byName(server);
    try {
      for (const uri of this.held.get(server)?.keys() ?? []) await this.subscribeUpstream(server, uri);
      if (view) await this.applyLevel(view);
    } catch (e) {
      this.warn('MCP server subscriptions or log level not restored', { server, error: describeError(e) });
    }
  }

  private async applyLevel(view: ServerView): Promise<void> {
    const asked = [...this.seeing(view)].map((d) => d.level).filter((l): l is LoggingLevel => l !== undefined);
    if (asked.length === 0) return;
    const level = asked.reduce((a, b) => (severity(b) < severity(a) ? b : a));
    if (this.levels.get(view.name) === level) return;
    const client = await this.catalog.client(view.name);
    if (!client.getServerCapabilities()?.logging) return;
    await client.setLoggingLevel(level, { timeout: PASSTHROUGH_TIMEOUT_MS });
    this.levels.set(view.name, level);
  }

  private async subscribeUpstream(server: string, uri: string): Promise<void> {
    const session = await this.catalog.session(server);
    if (!session.sdk.getServerCapabilities()?.resources?.subscribe) {
      throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `resources of MCP server '${server}' cannot be subscribed to (it does not offer subscriptions)`);
    }
    if (session.era === 'modern') {
      session.resourceSubscriptions.add(uri);
      session.listenAgain();
      return;
    }
    await session.sdk.subscribeResource({ uri }, { timeout: PASSTHROUGH_TIMEOUT_MS });
  }

  private async unsubscribeUpstream(server: string, uri: string): Promise<void> {
    const session = await this.catalog.session(server);
    if (session.era === 'modern') {
      session.resourceSubscriptions.delete(uri);
      session.listenAgain();
      return;
    }
    await session.sdk.unsubscribeResource({ uri }, { timeout: PASSTHROUGH_TIMEOUT_MS });
  }

  private *seeing(view: ServerView): Iterable<Downstream> {
    for (const d of this.live()) if (seesServer(d.caller, view.prefix)) yield d;
  }

  private *live(): Iterable<Downstream> {
    for (const d of this.sessions) {
      if (d.server.transport === undefined && this.isClosed(d)) continue;
      yield d;
    }
  }

  /** A session whose server has no transport any more ended (closed without close(), e.g. its transport closed itself). */
  private isClosed(d: Downstream): boolean {
    if (!this.connected.has(d.server)) return false; // not connected yet (being opened)
    this.detach(d);
    return true;
  }

  /** Servers seen with a transport once: one without it now has closed. */
  private readonly connected = new WeakSet<Server>();

  private sweep(): void {
    for (const d of this.sessions) {
      if (d.server.transport !== undefined) this.connected.add(d.server);
      else this.isClosed(d);
    }
  }

  /** Marks a session's server as connected (its first request came through it). */
  seen(d: Downstream): void {
    this.connected.add(d.server);
  }
}
