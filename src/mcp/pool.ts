import type { Cancel } from '../util/cancel.js';
import { EventEmitter } from 'node:events';
import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import { MCP_SERVER_DEFAULTS, type McpServerFile } from '../tools/mcp-server-schema.js';
import { DEFAULT_BACKOFF } from './backoff.js';
import { StartGate } from './pool-start.js';
import type { McpConnection } from './connection.js';
import type { McpSession } from './session.js';
import { McpPoolError } from './errors.js';
import { UpstreamTokens } from '../auth/upstream/index.js';
import type {
  McpCallOptions,
  McpPoolEventMap,
  McpPoolOptions,
  McpServerStatus,
  ResolvedPoolOptions,
} from './types.js';

export { McpPoolError, isMcpPoolError, type McpPoolErrorKind, type McpPoolErrorDetails } from './errors.js';
export type * from './types.js';
export { MCP_SERVER_STATES } from './types.js';

/** Outcome of start(): prestart servers that connected and those that did not (yet). */
export interface McpStartReport {
  ready: string[];
  failed: { server: string; error: string }[];
}

/**
 * The gateway's MCP clients: one long-lived, supervised session per declared server
 * (for stdio one child process in its own process group, shared by all calls).
 *
 * Events: `state` (every state change), `restart` (a reconnect attempt begins),
 * `toolsChanged` (list_changed notification, or a new session after a restart), `condition`
 * (the operator's view changed: connecting, up, backoff, failed; once per change, not per retry).
 *
 * Errors: every method rejects with McpPoolError only; see its `kind`. A tool result with
 * `isError: true` is thrown as `tool_error` (the result is in `details.result`).
 */
// The MCP client SDK (with zod) and the connection modules load with the first declared server (at import of dist/app.js: ≈ 8 MiB heap, 18 MiB RSS).
let connectionModule: Promise<typeof import('./connection.js')> | undefined;
let Connection: typeof McpConnection | undefined;
async function loadConnection(): Promise<void> {
  Connection ??= (await (connectionModule ??= import('./connection.js'))).McpConnection;
}

export class McpPool extends EventEmitter<McpPoolEventMap> {
  private readonly connections = new Map<string, McpConnection>();
  private readonly options: ResolvedPoolOptions;
  private closed = false;
  private readonly ownTokens: boolean;
  /** While the connection module loads (servers from the constructor, or the first updateServer): every async method awaits it. */
  private loading: Promise<void> | undefined;

  constructor(servers: readonly McpServerFile[] = [], options: McpPoolOptions = {}) {
    super();
    // Each tools/list in flight listens for its server's state (catalog.list), so a tools.d with
    // more than ten servers importing at once passes Node's default of 10 without any leak.
    this.setMaxListeners(0);
    this.options = { ...resolveOptions(options), onPassthrough: (e) => this.emit('passthrough', e) };
    this.ownTokens = options.upstreamTokens === undefined;
    const names = new Set<string>();
    for (const spec of servers) {
      if (names.has(spec.name)) throw new Error(`duplicate MCP server name '${spec.name}'`);
      names.add(spec.name);
    }
    if (servers.length > 0) {
      this.loading = this.load(() => {
        if (!this.closed) for (const spec of servers) this.connections.set(spec.name, this.connect(spec));
      });
    }
  }

  /** Loads the connection module; `then` runs before any method waiting for it goes on. */
  private load(then?: () => void): Promise<void> {
    return loadConnection().then(() => {
      then?.();
      this.loading = undefined;
    });
  }

  /**
   * Connects every `prestart` server and resolves when each has connected or failed its first
   * attempt (failed ones keep retrying with backoff). Others connect on first use.
   */
  async start(): Promise<McpStartReport> {
    if (this.loading) await this.loading;
    const prestart = [...this.connections.values()].filter((c) => c.currentSpec.prestart ?? MCP_SERVER_DEFAULTS.prestart);
    await Promise.all(prestart.map((c) => c.start()));
    const report: McpStartReport = { ready: [], failed: [] };
    for (const c of prestart) {
      const status = c.status();
      if (status.state === 'ready') report.ready.push(c.name);
      else report.failed.push({ server: c.name, error: status.lastError ?? status.state });
    }
    return report;
  }

  /** True when every prestart server has a ready session (for /readyz). */
  isReady(): boolean {
    return [...this.connections.values()].every((c) => {
      const status = c.status();
      return !status.prestart || status.state === 'ready';
    });
  }

  /**
   * Calls a tool over the server's shared session. Waits for a free slot (bounded queue) and,
   * during a connect or restart, for a session, both within `deadline`; the rest of the deadline
   * goes to the SDK as the request timeout, with the signal, so the server is sent
   * `notifications/cancelled` on timeout or abort.
   */
  async callTool(server: string, tool: string, args: Record<string, unknown>, opts: McpCallOptions): Promise<CallToolResult> {
    if (this.loading) await this.loading;
    return this.get(server).callTool(tool, args, opts);
  }

  /** The server's tools, every `tools/list` page followed. */
  async listTools(server: string, opts: { deadline?: number; cancel?: Cancel } = {}): Promise<Tool[]> {
    if (this.loading) await this.loading;
    return this.get(server).listTools(opts.deadline ?? Date.now() + this.options.listTimeoutMs, opts.cancel);
  }

  /** The server's ready session (connecting first, within the deadline), for the passthrough requests (resources, prompts, completions, logging). */
  async upstream(server: string, deadline: number, cancel?: Cancel): Promise<McpSession> {
    if (this.loading) await this.loading;
    return this.get(server).readySession(deadline, cancel);
  }

  /** Calls `cb` when the server's tool list may have changed; returns the unsubscribe. */
  onToolsChanged(server: string, cb: () => void): () => void {
    const listener = (event: { server: string }): void => {
      if (event.server === server) cb();
    };
    this.on('toolsChanged', listener);
    return () => {
      this.off('toolsChanged', listener);
    };
  }

  /** Pings a server within the deadline (active health checks); rejects when it is down or undeclared. */
  async ping(server: string, deadline: number): Promise<void> {
    if (this.loading) await this.loading;
    return this.get(server).ping(deadline);
  }

  /** Snapshot of one server, or undefined if it is not declared. */
  status(server: string): McpServerStatus | undefined {
    return this.connections.get(server)?.status();
  }

  /** Snapshots of all servers. */
  statuses(): McpServerStatus[] {
    return [...this.connections.values()].map((c) => c.status());
  }

  /**
   * Adds or replaces a server. An unchanged file keeps its session; a changed connection
   * (command, args, env, cwd, url, headers, transport) restarts that server only; pool
   * bounds and ping interval apply in place. A new prestart server is connected.
   */
  async updateServer(spec: McpServerFile): Promise<'added' | 'unchanged' | 'updated' | 'restarted'> {
    this.assertOpen();
    // The first server: calls and pings for it arriving meanwhile wait for the module too (not awaited by the catalog).
    if (this.loading || !Connection) await (this.loading ??= this.load());
    this.assertOpen();
    const existing = this.connections.get(spec.name);
    if (existing) return existing.update(spec);
    const connection = this.connect(spec);
    this.connections.set(spec.name, connection);
    if (spec.prestart) await connection.start();
    return 'added';
  }

  /** Removes a server: waiting calls fail, its session ends (a stdio server's whole group). */
  async removeServer(name: string): Promise<boolean> {
    if (this.loading) await this.loading;
    const connection = this.connections.get(name);
    if (!connection) return false;
    this.connections.delete(name);
    await connection.close();
    return true;
  }

  /** Applies a new mcp.startConcurrency (reload): connects waiting for a slot get the extra room at once. */
  setStartConcurrency(limit: number): void {
    this.options.startGate.resize(limit);
  }

  /** Ends every session and waits until no child process of any server remains. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.loading) await this.loading;
    const all = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(all.map((c) => c.close()));
    if (this.ownTokens) await this.options.upstreamTokens.close();
  }

  private connect(spec: McpServerFile): McpConnection {
    const server = spec.name;
    if (!Connection) throw new Error('the MCP connection module is not loaded');
    return new Connection(spec, this.options, {
      state: (state, previous, reason) => this.emit('state', { server, state, previous, ...(reason === undefined ? {} : { reason }) }),
      restart: (restarts, reason) => this.emit('restart', { server, restarts, reason }),
      toolsChanged: () => this.emit('toolsChanged', { server }),
      condition: (condition, previous, lastError) =>
        this.emit('condition', { server, condition, previous, ...(lastError === undefined ? {} : { lastError }) }),
    });
  }

  private get(server: string): McpConnection {
    const connection = this.connections.get(server);
    if (connection) return connection;
    const why = this.closed ? 'the MCP pool is closed' : `no MCP server named '${server}'`;
    throw new McpPoolError('unavailable', why, { server, mayHaveReachedServer: false });
  }

  private assertOpen(): void {
    if (this.closed) throw new McpPoolError('unavailable', 'the MCP pool is closed', { server: '', mayHaveReachedServer: false });
  }
}

/** Servers connecting at once when mcp.startConcurrency is not given (the schema's default too). */
export const DEFAULT_START_CONCURRENCY = 8;

function resolveOptions(options: McpPoolOptions): ResolvedPoolOptions {
  return {
    clientInfo: options.clientInfo ?? { name: 'toolgate', version: '0.1.0' },
    connectTimeoutMs: options.connectTimeoutMs ?? 30000,
    pingTimeoutMs: options.pingTimeoutMs ?? 5000,
    listTimeoutMs: options.listTimeoutMs ?? 30000,
    backoff: { ...DEFAULT_BACKOFF, ...options.backoff },
    failedRetryMs: options.failedRetryMs ?? 60000,
    killGraceMs: options.killGraceMs ?? 2000,
    stderrTailBytes: options.stderrTailBytes ?? 8192,
    secrets: options.secrets ?? new Set(),
    upstreamTokens: options.upstreamTokens ?? new UpstreamTokens(),
    startGate: new StartGate(options.startConcurrency ?? DEFAULT_START_CONCURRENCY),
    ...(options.trace ? { trace: options.trace } : {}),
    ...(options.onServerRequest ? { onServerRequest: options.onServerRequest } : {}),
  };
}
