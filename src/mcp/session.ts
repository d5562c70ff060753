import type { Cancel, CancelListener } from '../util/cancel.js';
import {
  Client,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  specTypeSchemas,
  StreamableHTTPClientTransport,
  type CallToolResult,
  type InputRequiredResult,
  isInputRequiredResult,
  withInputRequired,
  type McpSubscription,
  type PriorDiscovery,
  type Progress,
  type ProtocolEra,
  type Tool,
} from '@modelcontextprotocol/client';
import { MCP_SERVER_DEFAULTS, type McpServerFile } from '../tools/mcp-server-schema.js';
import { classifyFailure } from './classify.js';
import { describeConnectFailure, stderrLines } from './connect-failure.js';
import { describeError, McpPoolError } from './errors.js';
import { guard, type GuardedTransport, TransportSendError } from './guarded-transport.js';
import { ProcessGroupStdioTransport } from './stdio-transport.js';
import { hasContent, toolError } from './results.js';
import { createTransport } from './transports.js';
import { listenFilter, relayPassthrough } from './passthrough.js';
import type { McpCallOptions, ResolvedPoolOptions } from './types.js';
import { secretMatcher } from '../audit/secrets.js';
import type { ClientRequests } from '../tools/schema.js';
import { InFlightCall, InputRefused, POOL_CLIENT_CAPABILITIES, ServerRequestRelay } from './server-requests.js';

/** What a session tells its supervisor. */
export interface SessionHooks {
  /** The session ended without being asked to (child exit, dropped connection, failed pings). */
  onLost: (session: McpSession, reason: string) => void;
  onToolsChanged: () => void;
  /** The server file's `clientRequests` as it is now (a reload may change it without a restart). */
  clientRequests?: () => ClientRequests | undefined;
}

const MAX_LIST_PAGES = 1000;
/** A stdio server silent on `server/discover` for this long is taken for a legacy one. */
const STDIO_PROBE_TIMEOUT_MS = 10_000;
/** Codes a 2025 server gives a request sent without initialize ("Server not initialized"). */
const NOT_INITIALIZED_CODES = new Set([-32000, -32001, -32600, -32002]);
/** Delay before a dropped `subscriptions/listen` stream is opened again. */
const RELISTEN_MS = 1000;
/**
 * The spec's CallToolResult schema (both eras: in 2026-07-28 the SDK strips `resultType` before it),
 * given to `client.request` as the result schema. `client.callTool` validates with the same schema
 * but asks the era codec for it on every call by parsing `undefined` and formatting the zod error
 * (≈ a third of the SDK's cost per call), and probes its tools/list cache for an output validator,
 * which the pool never fills (it lists with `cacheMode: 'bypass'`); the pipeline checks outputSchema.
 */
const CALL_TOOL_RESULT = specTypeSchemas.CallToolResult;
const CALL_OR_INPUT = withInputRequired(CALL_TOOL_RESULT);
/** Rounds of input requests one call may take (as the SDK's own fulfilment). */
const MAX_INPUT_ROUNDS = 10;

/**
 * One initialized MCP client session (for stdio: one child process) shared by all calls.
 * Owns the ping loop; never reconnects by itself (McpConnection does).
 */
export class McpSession {
  /** Why the session ended, once it has. */
  lostReason: string | undefined;
  private ended = false;
  private intentional = false;
  private lastTransportError: string | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private pingFailures = 0;
  private pinging = false;
  /** The remembered Modern verdict proved stale (the server now wants initialize): probe again. */
  staleVerdict = false;
  /** The era was agreed by probing `server/discover` on this connect (no remembered verdict). */
  probed = false;
  /** A request of this session was answered (its era borne out at least once). */
  answered = false;
  private subscription: McpSubscription | undefined;
  private listens = 0;
  private relistenTimer: NodeJS.Timeout | undefined;
  /** The server's sampling, elicitation and roots requests, relayed to the client of the call they came with. */
  private readonly relay: ServerRequestRelay;
  /** Streamable HTTP: a 2025-era call's answer comes on a stream of its own, which may carry the server's requests. */
  private callsHaveStreams = false;

  private constructor(
    readonly server: string,
    private readonly client: Client,
    private readonly transport: GuardedTransport,
    private readonly hooks: SessionHooks,
    private readonly options: ResolvedPoolOptions,
  ) {
    this.relay = new ServerRequestRelay(server, hooks.clientRequests ?? (() => undefined), options.onServerRequest);
    this.relay.install(client);
  }

  /**
   * Starts the transport (spawns the child) and agrees on a revision: with `prior` (the verdict
   * of an earlier session) as it says, with no probe; else by probing `server/discover` and
   * falling back to `initialize` (SDK `mode: 'auto'`), taking the newest revision both speak.
   */
  static async open(spec: McpServerFile, options: ResolvedPoolOptions, hooks: SessionHooks, prior?: PriorDiscovery): Promise<McpSession> {
    const { trace } = options;
    const inner = createTransport(spec, { killGraceMs: options.killGraceMs, stderrTailBytes: options.stderrTailBytes }, { tokens: options.upstreamTokens, timeoutMs: options.connectTimeoutMs });
    const transport = guard(inner, trace && ((direction, message) => trace(spec.name, direction, message)));
    const probeTimeoutMs = spec.transport === 'stdio' ? Math.min(STDIO_PROBE_TIMEOUT_MS, options.connectTimeoutMs) : options.connectTimeoutMs;
    const client = new Client(options.clientInfo, {
      capabilities: POOL_CLIENT_CAPABILITIES,
      versionNegotiation: { mode: 'auto', probe: { timeoutMs: probeTimeoutMs } },
    });
    const session = new McpSession(spec.name, client, transport, hooks, options);
    session.probed = prior === undefined;
    session.callsHaveStreams = spec.transport === 'streamable-http';
    client.onclose = () => session.handleClosed();
    client.onerror = (err) => {
      session.lastTransportError = err.message;
    };
    // 2025: an unsolicited notification; 2026-07-28: the same notification on the listen stream.
    client.setNotificationHandler('notifications/tools/list_changed', () => hooks.onToolsChanged());
    relayPassthrough(client, spec.name, options.onPassthrough);
    try {
      await client.connect(transport, { timeout: options.connectTimeoutMs, ...(prior ? { prior } : {}) });
      // A remembered Modern verdict sends nothing at connect: one tools/list page proves the
      // server is there and still Modern, before the connection counts as up.
      if (prior?.kind === 'modern') await confirmModern(client, options.connectTimeoutMs);
    } catch (err) {
      session.intentional = true;
      await transport.close().catch(() => undefined);
      const child = inner instanceof ProcessGroupStdioTransport ? inner : undefined;
      // 'exit' may come before the last stderr bytes: they are usually the reason.
      if (child) await child.stderrEnded(300);
      const wire = { discoveredVersions: transport.discoveredVersions, lastTransportError: session.lastTransportError };
      throw describeConnectFailure(err, child && { exit: child.exit, stderrTail: child.stderrTail }, options.secrets, wire);
    }
    transport.markSendErrors = true;
    if (session.era === 'modern') {
      // No ping in this era (liveness is not defined there): a stdio child's exit, a failed request
      // or a dropped listen stream tells instead.
      session.listenForChanges();
    } else {
      session.setPingInterval(spec.pool?.pingIntervalMs ?? MCP_SERVER_DEFAULTS.pool.pingIntervalMs);
    }
    return session;
  }

  /** The SDK client, for the passthrough requests (resources, prompts, completions, logging: src/mcp-server/upstream.ts). */
  get sdk(): Client {
    return this.client;
  }

  /** 2026-07-28: the resource URIs the gateway subscribed to (on the listen stream). */
  readonly resourceSubscriptions = new Set<string>();

  /** 2026-07-28: opens the listen stream again with the current filter (its resource subscriptions changed). */
  listenAgain(): void {
    if (this.era !== 'modern' || this.ended || this.intentional) return;
    const old = this.subscription;
    this.subscription = undefined;
    if (old) void old.close().catch(() => undefined); // closed 'local': not re-opened by itself
    this.listenForChanges();
  }

  /** Whether `client.callTool` sends SEP-2243 `Mcp-Param-*` headers: 2026-07-28 over Streamable HTTP. */
  private get mirrorsHeaders(): boolean {
    return this.era === 'modern' && !(this.transport.inner instanceof ProcessGroupStdioTransport);
  }

  /** The era agreed at connect: 'modern' (2026-07-28, server/discover) or 'legacy' (initialize). */
  get era(): ProtocolEra | undefined {
    return this.client.getProtocolEra();
  }

  /** The verdict to pass as `prior` to the next session with the same server: no probe then. */
  get verdict(): PriorDiscovery | undefined {
    if (this.era === 'legacy') return { kind: 'legacy' };
    const discover = this.client.getDiscoverResult();
    return this.era === 'modern' && discover ? { kind: 'modern', discover } : undefined;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** The revision agreed (in `initialize`, or from `server/discover`). */
  get protocolVersion(): string | undefined {
    return this.client.getNegotiatedProtocolVersion() ?? this.transport.protocolVersion;
  }

  get pid(): number | undefined {
    return this.transport.inner instanceof ProcessGroupStdioTransport ? this.transport.inner.pid : undefined;
  }

  get sessionId(): string | undefined {
    return this.transport.sessionId;
  }

  get stderrTail(): string | undefined {
    return this.transport.inner instanceof ProcessGroupStdioTransport ? this.transport.inner.stderrTail : undefined;
  }

  /** (Re)starts the ping loop; 0 turns it off. */
  setPingInterval(intervalMs: number): void {
    clearInterval(this.pingTimer);
    this.pingTimer = undefined;
    if (intervalMs <= 0 || this.ended || this.era === 'modern') return;
    this.pingTimer = setInterval(() => this.pingOnce(), intervalMs);
    this.pingTimer.unref();
  }

  /**
   * One tools/call with the remaining time as the SDK's timeout and maxTotalTimeout (progress
   * never extends it) and the caller's signal (an abort or timeout sends notifications/cancelled).
   * An `isError: true` result is thrown as `tool_error` carrying the result.
   */
  async callTool(tool: string, args: Record<string, unknown>, opts: McpCallOptions): Promise<CallToolResult> {
    const remaining = opts.deadline - Date.now();
    if (remaining <= 0) {
      throw new McpPoolError('timeout', `tool '${tool}' of MCP server '${this.server}': deadline passed before sending`, {
        server: this.server, tool, mayHaveReachedServer: false,
      });
    }
    if (opts.cancel?.aborted) {
      throw new McpPoolError('aborted', `call to tool '${tool}' of MCP server '${this.server}' was aborted before it was sent`, {
        server: this.server, tool, mayHaveReachedServer: false,
      });
    }
    // The SDK's signal, per call (the SDK never removes its abort listener); the call's Cancel
    // aborts it.
    const local = new SignalLink();
    opts.cancel?.listen(local);
    let live = true;
    const { onProgress } = opts;
    const onprogress = onProgress && ((progress: Progress) => {
      if (live && Date.now() < opts.deadline) onProgress(progress);
    });
    let result: CallToolResult;
    try {
      const params = { name: tool, arguments: args, ...(opts.meta ? { _meta: { ...opts.meta } } : {}) };
      const modern = this.era === 'modern';
      const leg = (p: typeof params) => {
        const left = Math.max(1, opts.deadline - Date.now());
        // 2026-07-28: an input_required answer comes back to this call (relayed below), not to the SDK's own fulfilment.
        const options = { timeout: left, maxTotalTimeout: left, resetTimeoutOnProgress: false, signal: local.controller.signal, onprogress, ...(modern ? { allowInputRequired: true } : {}) };
        // 2026-07-28 over HTTP: callTool mirrors `x-mcp-header` arguments into headers and, on a
        // header mismatch, re-lists and retries; elsewhere the lighter request path (same checks).
        return this.mirrorsHeaders ? this.client.callTool(p, options) : this.client.request({ method: 'tools/call', params: p }, modern ? CALL_OR_INPUT : CALL_TOOL_RESULT, options);
      };
      const call = new InFlightCall(opts.clientRequests, opts.deadline, local.controller.signal);
      const answer = await this.relay.run(call, async () => {
        let out: CallToolResult | InputRequiredResult = await leg(params);
        for (let round = 1; isInputRequiredResult(out); round++) {
          if (round > MAX_INPUT_ROUNDS) throw new Error(`tools/call still required input after ${MAX_INPUT_ROUNDS} rounds`);
          const responses = out.inputRequests ? await this.relay.fulfil(call, out.inputRequests) : undefined;
          out = await leg({ ...params, ...(responses ? { inputResponses: responses } : {}), ...(out.requestState !== undefined ? { requestState: out.requestState } : {}) } as typeof params);
        }
        return out;
      }, this.callsHaveStreams && !modern);
      if (!hasContent(answer)) throw new Error('tools/call result without content');
      result = answer;
      this.answered = true;
    } catch (err) {
      // The gateway's own refusal of an input request: the server is fine (no era check, no break).
      if (err instanceof InputRefused) throw new McpPoolError('protocol', err.message, { server: this.server, tool, mayHaveReachedServer: true }, { cause: err });
      throw this.failure(err, tool, local.controller.signal);
    } finally {
      live = false;
      opts.cancel?.unlisten(local);
    }
    if (result.isError) throw toolError(this.server, tool, result);
    return result;
  }

  /**
   * One liveness check on the live session (active health checks); rejects on failure or
   * timeout. 2026-07-28 has no ping: `server/discover` is its cheapest request.
   */
  async ping(timeoutMs: number): Promise<void> {
    if (this.era === 'modern') await this.client.discover({ timeout: timeoutMs });
    else await this.client.ping({ timeout: timeoutMs });
  }

  /** All tools, following `nextCursor` to the end. */

  async listTools(deadline: number, cancel?: Cancel): Promise<Tool[]> {
    const signal = cancel?.signal;
    const tools: Tool[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const remaining = Math.max(1, deadline - Date.now());
      try {
        // 'bypass': the pool re-lists on purpose (a change, a new session); a cached page would hide it.
        const result = await this.client.listTools(cursor === undefined ? {} : { cursor }, { timeout: remaining, cacheMode: 'bypass', ...(signal ? { signal } : {}) });
        tools.push(...result.tools);
        cursor = result.nextCursor;
        this.answered = true;
      } catch (err) {
        throw this.failure(err, undefined, signal);
      }
      if (cursor === undefined) return tools;
      // A server repeating a cursor would page forever.
      if (seen.has(cursor)) break;
      seen.add(cursor);
    }
    throw new McpPoolError('protocol', `MCP server '${this.server}': tools/list pagination does not end`, {
      server: this.server, mayHaveReachedServer: true,
    });
  }

  /** Ends the session on purpose: DELETE for an HTTP session, the whole group for stdio. */
  async close(): Promise<void> {
    this.intentional = true;
    this.lostReason ??= 'session closed by the gateway (server removed or changed, or shutdown)';
    const subscription = this.subscription;
    this.subscription = undefined;
    if (subscription) await withTimeout(subscription.close(), 1000).catch(() => undefined);
    const inner = this.transport.inner;
    if (inner instanceof StreamableHTTPClientTransport && !this.ended && inner.sessionId !== undefined) {
      await withTimeout(inner.terminateSession(), 1000).catch(() => undefined);
    }
    await this.client.close().catch(() => undefined);
    // Also after a crash, when the client already let go: waits until the group is gone.
    await this.transport.close().catch(() => undefined);
  }

  /** Marks a broken session: close it and let the supervisor reconnect. */
  private break(reason: string): void {
    if (this.ended) return;
    this.lostReason ??= reason;
    void this.transport.close().catch(() => undefined);
  }

  private failure(err: unknown, tool: string | undefined, signal: AbortSignal | undefined): McpPoolError {
    if (err instanceof TransportSendError) this.break(`transport failed: ${describeError(err.cause)}`);
    const stderrTail = this.ended ? this.stderrTail : undefined;
    const failure = classifyFailure(err, {
      server: this.server,
      ...(tool === undefined ? {} : { tool }),
      ...(signal === undefined ? {} : { signal }),
      ...(this.lostReason === undefined ? {} : { lostReason: this.lostReason }),
      ...(stderrTail ? { stderrTail } : {}),
    });
    return this.era === 'modern' ? this.staleCheck(failure) : failure;
  }

  /**
   * In the Modern era there is no handshake to fail (a remembered verdict sends nothing at
   * connect, and an HTTP server may be replaced behind the same URL), so an answer is the proof:
   * a server that rejects a request as not initialized, as an unknown method or with an
   * unsupported protocol version now speaks only 2025. The session ends, the verdict is dropped,
   * and the request (which had no effect) may go again on the next, probed session.
   */
  private staleCheck(failure: McpPoolError): McpPoolError {
    const code = failure.details.mcpCode;
    const text = failure.cause instanceof Error ? failure.cause.message : failure.message;
    const stale = failure.kind === 'protocol' && code !== undefined && (code === -32022 || code === -32601 || (NOT_INITIALIZED_CODES.has(code) && /not initiali[sz]ed/i.test(text)));
    if (!stale) return failure;
    this.staleVerdict = true;
    const reason = `MCP server '${this.server}' no longer speaks 2026-07-28 as it did (${failure.message}); probing it again`;
    this.break(reason);
    return new McpPoolError('unavailable', reason, { ...failure.details, mayHaveReachedServer: false, retryAfterMs: 250 }, { cause: failure });
  }

  /**
   * 2026-07-28: tools/list_changed comes on a `subscriptions/listen` stream, opened once per
   * session and again (after a pause) when the server or the network drops it; a re-opened
   * stream re-imports, since a change meanwhile went unheard.
   */
  private listenForChanges(): void {
    if (this.ended || this.intentional) return;
    this.client.listen(listenFilter(this.client, [...this.resourceSubscriptions])).then(
      (subscription) => {
        if (this.ended || this.intentional) {
          void subscription.close().catch(() => undefined);
          return;
        }
        this.subscription = subscription;
        // A change while no stream was open went unheard: read the list again.
        if (this.listens++ > 0) this.hooks.onToolsChanged();
        void subscription.closed.then((how) => {
          if (this.subscription === subscription) this.subscription = undefined;
          if (how !== 'local') this.relisten();
        });
      },
      (err: unknown) => {
        this.lastTransportError = `subscriptions/listen failed: ${describeError(err)}`;
        this.relisten();
      },
    );
  }

  private relisten(): void {
    if (this.ended || this.intentional) return;
    clearTimeout(this.relistenTimer);
    this.relistenTimer = setTimeout(() => this.listenForChanges(), RELISTEN_MS);
    this.relistenTimer.unref();
  }

  private handleClosed(): void {
    if (this.ended) return;
    this.ended = true;
    this.setPingInterval(0);
    clearTimeout(this.relistenTimer);
    this.lostReason ??= this.describeEnd();
    if (!this.intentional) this.hooks.onLost(this, this.lostReason);
  }

  private pingOnce(): void {
    if (this.pinging || this.ended) return;
    this.pinging = true;
    this.client
      .ping({ timeout: this.options.pingTimeoutMs })
      .then(
        () => {
          this.pingFailures = 0;
        },
        (err: unknown) => {
          // A transport failure is conclusive; a slow answer gets a second chance.
          this.pingFailures++;
          if (err instanceof TransportSendError || this.pingFailures >= 2) this.break(`ping failed: ${describeError(err)}`);
        },
      )
      .finally(() => {
        this.pinging = false;
      });
  }

  /** A human description of how the session ended, for errors and events. */
  private describeEnd(): string {
    const inner = this.transport.inner;
    const parts: string[] = [];
    if (inner instanceof ProcessGroupStdioTransport) {
      const exit = inner.exit;
      if (exit?.signal) parts.push(`server process killed by ${exit.signal}`);
      else if (exit?.code !== null && exit?.code !== undefined) parts.push(`server process exited with code ${exit.code}`);
      const tail = stderrLines(secretMatcher(this.options.secrets).mask(inner.stderrTail));
      if (tail) parts.push(`stderr: ${tail}`);
    } else {
      parts.push('connection closed');
    }
    if (this.lastTransportError) parts.push(`last transport error: ${this.lastTransportError}`);
    return parts.join('; ') || 'session ended';
  }
}

/** The first answer with a remembered Modern verdict; a 2025-style refusal is an era failure (the verdict is dropped). */
async function confirmModern(client: Client, timeoutMs: number): Promise<void> {
  try {
    await client.listTools({}, { timeout: timeoutMs, cacheMode: 'bypass' });
  } catch (err) {
    const refused = err instanceof ProtocolError && (err.code === -32022 || err.code === -32601 || (NOT_INITIALIZED_CODES.has(err.code) && /not initiali[sz]ed/i.test(err.message)));
    if (!refused) throw err;
    throw new SdkError(SdkErrorCode.EraNegotiationFailed, `the remembered 2026-07-28 verdict no longer holds: ${err.message}`, undefined, { cause: err });
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A per-call AbortController for the SDK that the call's Cancel aborts (a listener object, not a closure). */
class SignalLink implements CancelListener {
  readonly controller = new AbortController();

  cancelled(reason: Error): void {
    this.controller.abort(reason);
  }
}
