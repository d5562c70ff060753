import type { Cancel } from '../util/cancel.js';
import { SdkError, SdkErrorCode, type CallToolResult, type PriorDiscovery, type Tool } from '@modelcontextprotocol/client';
import { MCP_SERVER_DEFAULTS, type McpServerFile } from '../tools/mcp-server-schema.js';
import { backoffDelay } from './backoff.js';
import { describeError, McpPoolError } from './errors.js';
import { Limiter } from './limiter.js';
import { McpSession } from './session.js';
import { outsideCalls } from './server-requests.js';
import { connectionKey } from './transports.js';
import { ConnectError, lastErrorWords } from './connect-failure.js';
import type { McpCallOptions, McpCondition, McpServerState, McpServerStatus, ResolvedPoolOptions } from './types.js';

/** Where a connection reports what happens to it (the pool turns these into events). */
export interface ConnectionEvents {
  state: (state: McpServerState, previous: McpServerState, reason?: string) => void;
  restart: (restarts: number, reason: string) => void;
  toolsChanged: () => void;
  /** The operator's view changed (once per change, not per retry). */
  condition: (condition: McpCondition, previous: McpCondition, lastError?: string) => void;
}

/**
 * Supervises one server: keeps one session alive (lazily or from start()), reconnects with
 * backoff when it is lost, bounds concurrent calls, and lets calls wait for a session within
 * their deadline.
 */
export class McpConnection {
  private state: McpServerState = 'idle';
  private session: McpSession | undefined;
  private opening: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private nextRetryAt = 0;
  private attempt = 0;
  private attempted = false;
  private connectedBefore = false;
  private restarts = 0;
  private readySince = 0;
  private lastError: string | undefined;
  /** The last attempt cannot succeed as configured (no common protocol version): retried slowly. */
  private failed = false;
  private condition: McpCondition = 'connecting';
  /**
   * The era verdict of the last session (Modern with its discover result, or legacy), passed as
   * `prior` to the next one: a reconnect sends no probe. Forgotten when how the server is
   * reached changes, or when it no longer holds.
   */
  private verdict: PriorDiscovery | undefined;
  private readonly limiter: Limiter;
  private readonly stateListeners = new Set<() => void>();
  private readonly retiring = new Set<Promise<void>>();

  constructor(
    private spec: McpServerFile,
    private readonly options: ResolvedPoolOptions,
    private readonly events: ConnectionEvents,
  ) {
    const pool = { ...MCP_SERVER_DEFAULTS.pool, ...spec.pool };
    this.limiter = new Limiter(spec.name, pool.maxInFlight, pool.maxQueue);
  }

  get name(): string {
    return this.spec.name;
  }

  get currentSpec(): McpServerFile {
    return this.spec;
  }

  status(): McpServerStatus {
    const status: McpServerStatus = {
      server: this.spec.name,
      transport: this.spec.transport,
      state: this.state,
      prestart: this.spec.prestart ?? MCP_SERVER_DEFAULTS.prestart,
      restarts: this.restarts,
      failed: this.failed,
      inFlight: this.limiter.inFlight,
      queued: this.limiter.queued,
    };
    const pid = this.session?.pid;
    const sessionId = this.session?.sessionId;
    if (pid !== undefined) status.pid = pid;
    if (sessionId !== undefined) status.sessionId = sessionId;
    if (this.lastError !== undefined) status.lastError = this.lastError;
    const protocolVersion = this.state === 'ready' ? this.session?.protocolVersion : undefined;
    if (protocolVersion !== undefined) status.protocolVersion = protocolVersion;
    const era = this.state === 'ready' ? this.session?.era : undefined;
    if (era !== undefined) status.era = era;
    if (this.retryTimer !== undefined && this.state === 'restarting' && !this.opening) status.nextRetryAt = this.nextRetryAt;
    return status;
  }

  /** Connects now if nothing has yet; resolves when that attempt is over (ready or failed). */
  async start(): Promise<void> {
    if (this.state === 'idle') await this.open();
    else await this.opening;
  }

  async callTool(tool: string, args: Record<string, unknown>, opts: McpCallOptions): Promise<CallToolResult> {
    await this.limiter.acquire(opts.deadline, opts.cancel);
    try {
      for (let attempt = 0; ; attempt++) {
        const session = await this.waitReady(opts.deadline, opts.cancel);
        try {
          return await session.callTool(tool, args, opts);
        } catch (err) {
          // A request that provably never reached the server (stale HTTP session after a server
          // restart, dead pipe) is sent once more on the next session, within the deadline.
          const resend = err instanceof McpPoolError && err.kind === 'unavailable' && !err.details.mayHaveReachedServer;
          if (!resend || attempt > 0 || Date.now() >= opts.deadline) throw err;
        }
      }
    } finally {
      this.limiter.release();
    }
  }

  /** A ping within the deadline, connecting first if need be (active health checks). */
  async ping(deadline: number): Promise<void> {
    // Waiting out a restart backoff would only hide that the server is down.
    if (this.state === 'restarting') {
      throw new McpPoolError('unavailable', `MCP server '${this.spec.name}' is restarting${this.because()}`, { server: this.spec.name, mayHaveReachedServer: false });
    }
    const session = await this.waitReady(deadline);
    await session.ping(Math.max(1, deadline - Date.now()));
  }

  /** The ready session, waiting (within the deadline) while connecting or restarting: passthrough requests. */
  readySession(deadline: number, cancel?: Cancel): Promise<McpSession> {
    return this.waitReady(deadline, cancel);
  }

  async listTools(deadline: number, cancel?: Cancel): Promise<Tool[]> {
    const session = await this.waitReady(deadline, cancel);
    return session.listTools(deadline, cancel);
  }

  /**
   * Takes a new file for this server. Only a change in how to reach it (transport, command,
   * args, env, cwd, url, headers) restarts the session; pool bounds and ping apply in place.
   */
  async update(spec: McpServerFile): Promise<'unchanged' | 'updated' | 'restarted'> {
    const restart = connectionKey(spec) !== connectionKey(this.spec);
    const changed = JSON.stringify(spec) !== JSON.stringify(this.spec);
    this.spec = spec;
    const pool = { ...MCP_SERVER_DEFAULTS.pool, ...spec.pool };
    this.limiter.resize(pool.maxInFlight, pool.maxQueue);
    if (!restart) {
      this.session?.setPingInterval(pool.pingIntervalMs);
      return changed ? 'updated' : 'unchanged';
    }
    const wasActive = this.state !== 'idle' || (spec.prestart ?? false);
    await this.opening;
    const old = this.session;
    this.session = undefined;
    clearTimeout(this.retryTimer);
    if (old) await old.close();
    this.attempt = 0;
    this.failed = false;
    this.verdict = undefined;
    this.lastError = 'configuration changed';
    if (wasActive) await this.open();
    else this.setState('idle');
    return 'restarted';
  }

  /** Final: fails waiting calls, ends the session (the whole process group for stdio). */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    clearTimeout(this.retryTimer);
    this.setState('closed');
    await this.opening;
    const session = this.session;
    this.session = undefined;
    if (session) await session.close();
    await Promise.all([...this.retiring]);
  }

  private async open(): Promise<void> {
    if (this.opening || this.state === 'closed') return this.opening;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (this.attempted) {
      this.restarts++;
      this.events.restart(this.restarts, this.lastError ?? 'reconnect');
    }
    this.setState(this.attempted ? 'restarting' : 'connecting');
    this.attempted = true;
    // Opened outside the call that may have asked for it: a stream it opens belongs to no call.
    this.opening = outsideCalls(() => this.connect()).finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  private async connect(): Promise<void> {
    let session: McpSession;
    try {
      // One slot of mcp.startConcurrency for this attempt (pool-start.ts); a server removed while it waited does not start.
      session = await this.options.startGate.run(() => (this.state === 'closed' ? Promise.reject(new Error('removed')) : this.openSession()));
    } catch (err) {
      this.lastError = err instanceof ConnectError ? err.message : lastErrorWords(describeError(err), this.options.secrets);
      this.failed = err instanceof ConnectError && err.cannotSucceed;
      if (this.state !== 'closed') this.scheduleRetry();
      return;
    }
    this.verdict = session.verdict ?? this.verdict;
    if (this.state === 'closed') {
      await session.close();
      return;
    }
    this.session = session;
    this.readySince = Date.now();
    this.lastError = undefined;
    this.failed = false;
    // It may have died between the handshake and here.
    if (session.isEnded) return this.onLost(session, session.lostReason ?? 'session ended');
    this.setState('ready');
    // A new session after a restart may serve other tools than the last one.
    if (this.connectedBefore) this.events.toolsChanged();
    this.connectedBefore = true;
  }

  /**
   * One session, with the remembered verdict as `prior`. A verdict that no longer holds (a
   * Modern advertisement the SDK rejects, a legacy server that now refuses initialize) is
   * dropped and the server probed again at once; a stdio server that exits on the probe is a
   * legacy one, started again for `initialize`.
   */
  private async openSession(): Promise<McpSession> {
    const hooks = {
      onLost: (lost: McpSession, reason: string) => this.onLost(lost, reason),
      onToolsChanged: () => this.events.toolsChanged(),
      clientRequests: () => this.spec.clientRequests,
    };
    try {
      return await McpSession.open(this.spec, this.options, hooks, this.verdict);
    } catch (err) {
      if (this.state === 'closed') throw err;
      const cause = err instanceof ConnectError ? err.cause : err;
      if (this.verdict !== undefined && (isEraFailure(cause) || (err instanceof ConnectError && err.cannotSucceed))) {
        this.verdict = undefined;
        return McpSession.open(this.spec, this.options, hooks);
      }
      if (this.verdict === undefined && this.spec.transport === 'stdio' && isEraFailure(cause) && /closed during the server\/discover probe/.test(describeError(cause))) {
        this.verdict = { kind: 'legacy' };
        return McpSession.open(this.spec, this.options, hooks, this.verdict);
      }
      throw err;
    }
  }

  private onLost(session: McpSession, reason: string): void {
    if (session !== this.session || this.state === 'closed') return;
    this.session = undefined;
    // A Modern verdict that fails the 2025 way is probed again, unless it was just probed and never
    // borne out: then the server's server/discover claims what it does not speak (a re-probe would
    // say the same, in a loop), so the next connect tries initialize.
    if (session.staleVerdict) this.verdict = session.probed && !session.answered ? { kind: 'legacy' } : undefined;
    this.lastError = lastErrorWords(reason, this.options.secrets);
    // Make sure the group is gone (crash) and let close() wait for it.
    const retired = session.close().finally(() => this.retiring.delete(retired));
    this.retiring.add(retired);
    if (Date.now() - this.readySince >= this.options.backoff.healthyAfterMs) this.attempt = 0;
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    // A server that cannot agree on a protocol version will not by retrying fast: no restart loop.
    const delay = this.failed ? this.options.failedRetryMs : backoffDelay(this.attempt++, this.options.backoff);
    this.nextRetryAt = Date.now() + delay;
    this.retryTimer = setTimeout(() => void this.open(), delay);
    this.retryTimer.unref();
    this.setState('restarting', this.lastError);
    this.report();
  }

  /** ': <last error>' for messages, or nothing. */
  private because(): string {
    return this.lastError ? `: ${this.lastError}` : '';
  }

  /** Tells the pool when the operator's view changed: once per change, never per retry. */
  private report(): void {
    const next: McpCondition =
      this.state === 'ready' ? 'up' : this.state === 'restarting' ? (this.failed ? 'failed' : 'backoff') : 'connecting';
    if (next === this.condition || this.state === 'closed') return;
    const previous = this.condition;
    this.condition = next;
    this.events.condition(next, previous, next === 'up' ? undefined : this.lastError);
  }

  /** The ready session, waiting (within the deadline) while connecting or restarting. */
  private async waitReady(deadline: number, cancel?: Cancel): Promise<McpSession> {
    for (;;) {
      if (this.state === 'idle') void this.open();
      if (this.state === 'ready' && this.session && !this.session.isEnded) return this.session;
      // Waiting a minute for the slow retry would only hide the cause.
      if (this.failed && this.state === 'restarting') throw this.notReadyError();
      if (this.state === 'closed') {
        throw new McpPoolError('unavailable', `MCP server '${this.spec.name}' was removed or the pool closed`, {
          server: this.spec.name, mayHaveReachedServer: false,
        });
      }
      await this.nextStateChange(deadline, cancel);
    }
  }

  private nextStateChange(deadline: number, cancel?: Cancel): Promise<void> {
    if (cancel?.aborted) return Promise.reject(cancel.reason);
    return new Promise<void>((resolve, reject) => {
      let unhook: (() => void) | undefined;
      const done = (): void => {
        clearTimeout(timer);
        unhook?.();
        this.stateListeners.delete(onChange);
      };
      const onChange = (): void => {
        done();
        resolve();
      };
      const onAbort = (): void => {
        done();
        const why = this.lastError ? `MCP server '${this.spec.name}' is not connected${this.because()} (call aborted while waiting for a session)` : undefined;
        reject(new McpPoolError('aborted', why ?? `call to MCP server '${this.spec.name}' aborted while waiting for a session`, {
          server: this.spec.name, mayHaveReachedServer: false,
        }));
      };
      const timer = setTimeout(() => {
        done();
        reject(this.notReadyError());
      }, Math.max(0, deadline - Date.now()));
      unhook = cancel?.onAbort(onAbort);
      this.stateListeners.add(onChange);
    });
  }

  private notReadyError(): McpPoolError {
    const retryAfterMs = Math.max(250, this.nextRetryAt - Date.now());
    const what = this.failed ? 'failed (retried slowly)' : `${this.state}, no session before the call's deadline`;
    return new McpPoolError('unavailable', `MCP server '${this.spec.name}' is ${what}${this.because()}`, {
      server: this.spec.name, mayHaveReachedServer: false, retryAfterMs,
    });
  }

  private setState(state: McpServerState, reason?: string): void {
    const previous = this.state;
    if (previous === state) return;
    this.state = state;
    this.events.state(state, previous, reason);
    this.report();
    for (const listener of [...this.stateListeners]) listener();
  }
}

function isEraFailure(err: unknown): boolean {
  return err instanceof SdkError && err.code === SdkErrorCode.EraNegotiationFailed;
}
