import { EventEmitter } from 'node:events';
import type { LoadedConfig } from './config/load.js';
import type { KeyTable } from './auth/keys.js';
import { Authenticator } from './auth/authenticator.js';
import { protectedResource, type ProtectedResource } from './auth/resource.js';
import { BuiltinAdapter } from './adapters/builtin/index.js';
import { HttpAdapter } from './adapters/http.js';
import { UpstreamTokens } from './auth/upstream/index.js';
import type { LookupAll } from './guards/url.js';
import { McpAdapter } from './adapters/mcp.js';
import { createAuditSink } from './audit/create.js';
import { auditRecord } from './audit/record.js';
import { serverRequestRecord } from './mcp/server-request-audit.js';
import type { AuditSink } from './audit/types.js';
import { CallPipeline, type PipelineDeps } from './pipeline/index.js';
import type { Adapters } from './pipeline/execute.js';
import type { Rng } from './routing/select.js';
import { HealthBook, type BackendState } from './resilience/health.js';
import { createStateStore, RedisStore } from './state/index.js';
import { BreakerSync } from './resilience/breaker-sync.js';
import { CallRecords } from './calls/records.js';
import { BackgroundCalls } from './calls/background.js';
import { ResultPages } from './calls/result-pages.js';
import { Confirmations } from './confirm/service.js';
import { makeGate } from './confirm/gate.js';
import { webhookNotifier } from './confirm/webhook.js';
import type { StateStore } from './state/types.js';
import { loadToolsDir, type LoadContext } from './tools/loader.js';
import { Registry } from './tools/registry.js';
import type { Env } from './util/env.js';
import type { FileProblem } from './util/source.js';
import { GatewayMetrics } from './metrics/index.js';
import { Readiness } from './readiness.js';
import { logNewWarnings, logReload, type ReloadLogger } from './tools/reload-log.js';
import { ToolsWatcher } from './tools/watcher.js';
import { InFlight } from './util/in-flight.js';
import { McpPool } from './mcp/pool.js';
import type { McpPoolOptions } from './mcp/types.js';
import { Prober } from './resilience/probes.js';
import { McpCatalog } from './mcp/catalog.js';
import { Tracing } from './tracing/index.js';
import { OpenApiBook } from './tools/openapi/book.js';
import type { OperationChange } from './tools/openapi/pins.js';
import { auditFindings, omittedFindings } from './mcp/hold-view.js';
import { findingKinds } from './tools/definition-findings.js';
import { callerKey } from './auth/caller.js';
import { SearchEvents } from './prefilter/search-events.js';
import { createLearner, type Learner } from './prefilter/learn/index.js';
import { indexFor } from './prefilter/registry-index.js';

export interface ReloadResult {
  generation: number;
  at: string;
  tools: number;
  added: string[];
  changed: string[];
  removed: string[];
  errors: FileProblem[];
}

export interface GatewayOptions {
  loaded: LoadedConfig;
  env: Env;
  rng?: Rng;
  audit?: AuditSink;
  state?: StateStore;
  onCallEnd?: PipelineDeps['onCallEnd'];
  onBackendState?: (tool: string, backend: string, state: BackendState) => void;
  /** The clock of confirmations (tests move it to pass an expiry). */
  now?: () => number;
  onWarning?: (msg: string, err?: unknown) => void;
  /** Default: a fresh registry of its own per gateway. */
  metrics?: GatewayMetrics;
  /** Reload results and watcher failures are logged here. */
  log?: ReloadLogger;
  /** Every MCP message in and out (tests, debugging). */
  mcpTrace?: McpPoolOptions['trace'];
  /** The resolver of `resolve: true` URL guards and `builtin: fetch` (default: the system's; tests give their own). */
  lookup?: LookupAll;
}

/**
 * The gateway's long-lived parts: registry snapshot, key table, adapters, audit sink, pipeline.
 * Emits `reload` with each ReloadResult (after the swap).
 */
export class Gateway extends EventEmitter<{ reload: [ReloadResult] }> {
  registry: Registry = Registry.empty();
  lastReload: ReloadResult | undefined;
  ready = false;
  draining = false;
  /** API keys and trusted issuers: who is calling. */
  readonly auth: Authenticator;
  /** The API keys alone (as before the issuers came). */
  readonly keys: KeyTable;
  readonly audit: AuditSink;
  readonly adapters: Adapters;
  readonly pipeline: CallPipeline;
  readonly health: HealthBook;
  /** Active health checks of the backends that declare a probe, per registry generation. */
  private readonly prober: Prober;
  readonly state: StateStore;
  readonly secrets: Set<string>;
  readonly confirmations: Confirmations;
  readonly calls: CallRecords;
  /** Long-running calls (`async: true`, `Prefer: respond-async`) run here in the background. */
  readonly background: BackgroundCalls;
  /** Large results' full text, for GET /v1/calls/{id}/result. */
  readonly pages: ResultPages;
  readonly metrics: GatewayMetrics;
  /** Calls in progress, for the shutdown drain (counted by plugins/drain.ts). */
  readonly inFlight = new InFlight();
  /** What /readyz waits for; the MCP pool adds its check here. */
  readonly readiness = new Readiness();
  /** One supervised session per declared MCP server (stdio children in their own process groups). */
  readonly mcpPool: McpPool;
  /** The gateway as an OAuth protected resource (RFC 9728); undefined without auth.oidc. */
  readonly resource: ProtectedResource | undefined;
  /** Imports the servers' tools into each generation, pins their definitions. */
  readonly mcp: McpCatalog;
  /** The kind: openapi files' parsed documents, url caches and refresh timers, and their operations' pins. */
  readonly openapi: OpenApiBook;
  /** Tokens for upstreams with `credentials` (HTTP backends and MCP servers). */
  readonly upstreamTokens = new UpstreamTokens();
  /** OpenTelemetry spans of calls (config `tracing`); undefined when off. */
  readonly tracing: Tracing | undefined;
  /** Prefilter searches answered for a session (/v1/route, find_tools): the learner listens. */
  readonly searchEvents = new SearchEvents();
  /** prefilter.learn; undefined when off. */
  readonly learner: Learner | undefined;
  private readonly loadCtx: LoadContext;
  /** The last load of tools.d alone, before MCP imports were merged in. */
  private files: Registry | undefined;
  private watcher: ToolsWatcher | undefined;
  private reloadChain: Promise<unknown> = Promise.resolve();
  private readonly sweeper: NodeJS.Timeout;
  /** Opens and closes shared with the other replicas (Redis pub/sub), when Redis is configured. */
  private readonly breakerSync: BreakerSync | undefined;

  constructor(private readonly opts: GatewayOptions) {
    super();
    const { config } = opts.loaded;
    this.metrics = opts.metrics ?? new GatewayMetrics();
    this.secrets = opts.loaded.secrets;
    this.auth = new Authenticator(config, opts.now ? { now: opts.now } : {});
    this.keys = this.auth.keys;
    this.resource = protectedResource(config);
    this.audit = opts.audit ?? createAuditSink(config, (msg, err) => this.warn(msg, err));
    this.mcpPool = new McpPool([], { secrets: this.secrets, startConcurrency: config.mcp.startConcurrency, upstreamTokens: this.upstreamTokens, onServerRequest: (e) => this.audit.write(serverRequestRecord(e)), ...(opts.mcpTrace ? { trace: opts.mcpTrace } : {}) });
    this.adapters = { http: new HttpAdapter(undefined, this.upstreamTokens), builtin: new BuiltinAdapter({ lookup: opts.lookup, maxResponseBytes: config.defaults.http.maxResponseBytes }), mcp: new McpAdapter(this.mcpPool) };
    this.openapi = new OpenApiBook({
      onDocumentChange: () => void this.reload().catch(() => undefined),
      onChanges: (file, name, changes) => this.operationsChanged(file, name, changes),
    });
    this.loadCtx = { dir: config.tools.dir, env: opts.env, secrets: this.secrets, defaults: config.defaults, openapi: this.openapi, ...(opts.lookup ? { lookup: opts.lookup } : {}) };
    this.health = new HealthBook((tool, backend, state) => {
      this.metrics.backendState(tool, backend, state);
      opts.onBackendState?.(tool, backend, state);
    });
    this.prober = new Prober(this.health, (server, deadline) => this.mcpPool.ping(server, deadline));
    this.state = opts.state ?? createStateStore(config, { onStatus: (up) => this.redisStatus(up) });
    // Reported, never blocking: SPEC §1 keeps a replica ready while Redis is down.
    const redis = this.state instanceof RedisStore ? this.state : undefined;
    if (redis) this.readiness.add('redis', () => ({ ready: true, state: redis.isUp ? 'up' : 'down' }));
    this.breakerSync = config.state.redis ? new BreakerSync(config.state.redis, this.health, () => this.registry) : undefined;
    // Four-eyes needs identities to tell apart: keys or tokens.
    const withKeys = config.auth.mode === 'keys' && (config.auth.keys.length > 0 || config.auth.oidc.length > 0);
    this.confirmations = new Confirmations(this.state, this.audit, config.confirmations, withKeys, opts.now);
    this.calls = new CallRecords(this.state, (config.confirmations.ttlSeconds + 86400) * 1000);
    const retentionMs = config.calls.retentionSeconds * 1000;
    this.background = new BackgroundCalls(this.state, this.calls, {
      leaseMs: config.calls.leaseSeconds * 1000,
      progressIntervalMs: config.calls.progressIntervalMs,
      retentionMs,
      track: () => this.inFlight.enter(), // the shutdown drain waits for them too, within its bound
      onWarning: (msg, err) => this.warn(msg, err),
      onInterrupted: (rec) => this.audit.write(auditRecord({ event: 'call', callId: rec.callId, caller: rec.caller, sessionId: rec.sessionId, tool: rec.tool, outcome: 'error', errorCode: 'INTERRUPTED' })),
    });
    this.pages = new ResultPages(this.state, retentionMs, config.calls.maxStoredResultBytes);
    const hook = config.confirmations.webhook;
    const gate = makeGate({
      confirmations: this.confirmations,
      calls: this.calls,
      secrets: this.secrets,
      ...(hook ? { onPending: webhookNotifier(hook, (e) => opts.onWarning?.('confirmation webhook failed', e)) } : {}),
    });
    this.sweeper = setInterval(() => void this.confirmations.sweep().catch(() => undefined), config.confirmations.sweepIntervalMs);
    this.sweeper.unref();
    this.tracing = Tracing.create(config.tracing);
    const learner = (this.learner = createLearner(config, { state: this.state, lexicon: () => indexFor(this.registry).lexicon, onWarning: (msg, err) => this.warn(msg, err) }));
    if (learner) this.searchEvents.listen((e) => learner.noteSearch(e));
    this.pipeline = new CallPipeline({
      tracing: this.tracing,
      background: this.background,
      pages: this.pages,
      gate,
      registry: () => this.registry,
      adapters: this.adapters,
      audit: this.audit,
      health: this.health,
      state: this.state,
      limits: config.limits,
      secrets: this.secrets,
      rng: opts.rng ?? Math.random,
      ...(opts.now ? { now: opts.now } : {}),
      onWarning: (msg, err) => this.warn(msg, err),
      onCallEnd: (e) => {
        this.metrics.callEnded(e);
        opts.onCallEnd?.(e);
      },
      onResultFindings: (tool, findings) => this.metrics.resultFindings(tool, findings),
      ...(learner ? { onSessionCall: (req, tool) => learner.noteCall({ callerKey: callerKey(req.caller), sessionId: req.sessionId, tool: tool.name }) } : {}),
    });
    this.metrics.feed({
      registry: () => ({ tools: this.registry.size, generation: this.registry.generation }),
      confirmationsPending: () => this.confirmations.pendingCount,
      breakers: () => this.registry.tools.flatMap((t) => t.backends.map((b) => ({ tool: t.name, backend: b.id, state: this.health.view(t, b).state }))),
    });
    this.readiness.add('registry', () => ({ ready: this.ready, state: this.ready ? 'loaded' : 'loading' }));
    // MCP servers of tools.d: imported in the background; readiness waits for the prestart ones.
    this.mcp = new McpCatalog({ pool: this.mcpPool, defaults: config.defaults, audit: this.audit, reload: () => this.reload(), log: opts.log });
    this.readiness.add('mcp', () => this.mcp.readiness());
    this.metrics.feed({ mcpConnections: () => this.mcpPool.statuses() });
    this.mcpPool.on('restart', (e) => this.metrics.mcpRestarted(e.server));
    // Once per change of condition, not per retry: the cause is in the line (and in GET /admin/mcp).
    this.mcpPool.on('condition', ({ server, condition, previous, lastError }) => {
      if (condition === 'up') opts.log?.info({ server, state: condition, previous }, `MCP server '${server}' is up`);
      else if (condition !== 'connecting') opts.log?.warn({ server, state: condition, previous, lastError }, `MCP server '${server}' ${condition === 'failed' ? 'failed (retried slowly)' : 'is down (retrying with backoff)'}: ${lastError ?? 'no cause known'}`);
    });
  }

  /** First load of tools.d, then (config `tools.watch`) reloads on every change in it. */
  async start(): Promise<void> {
    await this.reload();
    if (!this.config.tools.watch || this.watcher) return;
    this.watcher = new ToolsWatcher({
      dir: this.config.tools.dir,
      debounceMs: this.config.tools.watchDebounceMs,
      reload: () => this.reload(),
      onError: (err, where) => this.opts.log?.error({ err, dir: this.config.tools.dir }, where === 'watch' ? 'cannot watch tools.d' : 'reload failed'),
    });
    this.watcher.start();
    this.watcher.watchFiles(this.specPaths());
  }

  /** The `spec:` documents of the openapi files (the watcher reloads when one changes). */
  private specPaths(): string[] {
    return this.openapi.specPaths();
  }

  get config() {
    return this.opts.loaded.config;
  }

  private warn(msg: string, err?: unknown): void {
    this.opts.onWarning?.(msg, err);
    this.opts.log?.warn({ err }, msg);
  }

  /** Every changed operation definition is audited with both hashes, held or (trustChanges) accepted, as MCP tools are. */
  private operationsChanged(file: string, document: string, changes: readonly OperationChange[]): void {
    for (const c of changes) {
      // A first definition held for its findings is `tool-poisoned`, as for MCP tools; findings: kinds, where, offsets (never the text).
      const action = c.oldHash === null ? 'tool-poisoned' : 'tool-changed';
      const findings = auditFindings(c.findings);
      const omitted = omittedFindings(c.findings);
      this.audit.write(auditRecord({
        event: 'reload', action, tool: c.tool, document, file, oldHash: c.oldHash, newHash: c.newHash, status: c.status, reason: c.reason,
        ...(findings.length > 0 ? { findings } : {}), ...(omitted > 0 ? { findingsOmitted: omitted } : {}),
      }));
      const what = c.reason === 'poisoned' ? `OpenAPI operation definition has ${findingKinds(c.findings).join(' and ')} findings` : 'OpenAPI operation definition changed';
      this.opts.log?.warn({ tool: c.tool, oldHash: c.oldHash, newHash: c.newHash, status: c.status, ...(findings.length > 0 ? { findings } : {}) }, `${what}: ${c.status}`);
    }
  }

  private redisStatus(up: boolean): void {
    if (up) this.opts.log?.info({}, 'shared state (Redis) is up');
    else this.warn('shared state (Redis) is down: gated calls, approvals and idempotent calls answer 503 until it returns');
  }

  /**
   * Loads tools.d into a new generation and swaps it in; the change is audited, logged and
   * counted. One at a time: a reload asked for during another runs after it, and sees its result.
   */
  reload(): Promise<ReloadResult> {
    const run = this.reloadChain.then(() => this.reloadNow());
    this.reloadChain = run.catch(() => undefined);
    run.catch(() => this.metrics.reloaded('failed'));
    return run;
  }

  private async reloadNow(): Promise<ReloadResult> {
    const before = this.registry;
    // tools.d alone (its unchanged files reused), then the MCP servers' imported tools merged in.
    this.files = await loadToolsDir(this.loadCtx, this.files);
    const next = this.mcp.compose(this.files, before.generation + 1);
    this.registry = next;
    this.health.retain(next.tools);
    this.prober.sync(next.tools);
    this.ready = true;
    this.watcher?.watchFiles(this.specPaths());
    const old = new Map(before.tools.map((t) => [t.name, t.source.hash]));
    const now = new Map(next.tools.map((t) => [t.name, t.source.hash]));
    const result: ReloadResult = {
      generation: next.generation,
      at: next.loadedAt,
      tools: next.size,
      added: [...now.keys()].filter((n) => !old.has(n)),
      changed: [...now.keys()].filter((n) => old.has(n) && old.get(n) !== now.get(n)),
      removed: [...old.keys()].filter((n) => !now.has(n)),
      errors: [...next.problems],
    };
    this.lastReload = result;
    this.audit.write(auditRecord({ event: 'reload', ...result }));
    this.metrics.reloaded(result);
    if (this.opts.log) {
      logReload(this.opts.log, result);
      logNewWarnings(this.opts.log, before.warnings, next.warnings);
    }
    this.emit('reload', result);
    return result;
  }

  async close(): Promise<void> {
    await this.watcher?.stop();
    await this.background.close(); // background calls still running end as interrupted (audited) before their servers and sinks close
    await this.mcp.close();
    this.openapi.close();
    await this.reloadChain;
    clearInterval(this.sweeper);
    this.prober.close();
    this.health.close();
    await this.breakerSync?.close();
    await this.learner?.close();
    await Promise.allSettled(Object.values(this.adapters).map((a) => a.close?.()));
    await this.upstreamTokens.close();
    await this.state.close();
    await this.audit.close();
    await this.tracing?.close();
  }
}
