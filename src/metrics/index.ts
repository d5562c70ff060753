import { Registry } from 'prom-client';
import { ERROR_CATALOGUE } from '../errors.js';
import type { BackendState } from '../resilience/health.js';
import { defineMetrics, type MetricSet, type MetricSources } from './definitions.js';
import { processMetrics } from './process.js';
import type { FindingAction, FindingKind } from '../guards/result/types.js';

export { BREAKER_VALUE, CALL_BUCKETS, type MetricSources } from './definitions.js';

/** What the pipeline reports of each finished call (PipelineDeps['onCallEnd']). */
export interface CallEnd {
  tool: string;
  backend: string;
  outcome: 'ok' | 'error' | 'fallback';
  errorCode?: string;
  seconds: number;
}

const FINDING_KINDS: ReadonlySet<string> = new Set<FindingKind>(['secret', 'email', 'phone', 'card', 'iban', 'cn_id', 'injection', 'invisible', 'link', 'blocks', 'webhook']);
const FINDING_ACTIONS: ReadonlySet<string> = new Set<FindingAction>(['redact', 'flag', 'refuse', 'strip', 'defang', 'truncate']);

const nothing: MetricSources = {
  registry: () => ({ tools: 0, generation: 0 }),
  breakers: () => [],
  confirmationsPending: () => 0,
  mcpConnections: () => [],
};

/**
 * The gateway's metrics: the toolgate_ set on one prom-client Registry per instance (tests build
 * many apps; prom-client's global registry would mix them), exposed with Node's default process
 * metrics (one collector per process, see process.ts).
 * Counters are fed by events (calls, breaker transitions, reloads); gauges are read at scrape time
 * from sources the gateway's parts plug in with `feed()`.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly m: MetricSet;
  private readonly process: Registry | undefined;
  private sources: MetricSources = { ...nothing };

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    this.process = opts.defaultMetrics === false ? undefined : processMetrics();
    this.m = defineMetrics(this.registry, () => this.sources);
    // Both results exist from the start, so rate() and absent() alerts work before the first error.
    this.m.reloads.inc({ result: 'ok' }, 0);
    this.m.reloads.inc({ result: 'error' }, 0);
  }

  /**
   * Plugs in what scrapes read: `registry` and `breakers` (the gateway), `confirmationsPending`
   * (the confirmation store), `mcpConnections` (the MCP pool).
   */
  feed(sources: Partial<MetricSources>): void {
    this.sources = { ...this.sources, ...sources };
  }

  /** The pipeline's onCallEnd: only calls whose tool resolved arrive here, so names are bounded. */
  callEnded(e: CallEnd): void {
    this.bound(e.tool, e.backend, e.outcome).inc();
    let duration = this.durationByTool.get(e.tool);
    if (!duration) this.durationByTool.set(e.tool, (duration = this.m.callDuration.labels({ tool: e.tool })));
    duration.observe(e.seconds);
    if (e.outcome === 'error') {
      const code = e.errorCode !== undefined && e.errorCode in ERROR_CATALOGUE ? e.errorCode : 'INTERNAL';
      this.m.callErrors.inc({ tool: e.tool, code });
    }
  }

  /**
   * A call's result-guard findings (counted by matches). Tools come from the registry and kinds
   * and actions from fixed sets (guards/result/types.ts), so label sets stay bounded.
   */
  resultFindings(tool: string, findings: readonly { kind: string; action: string; count: number }[]): void {
    for (const f of findings) {
      if (!FINDING_KINDS.has(f.kind) || !FINDING_ACTIONS.has(f.action)) continue;
      this.m.resultFindings.inc({ tool, kind: f.kind, action: f.action }, f.count);
    }
  }

  /** Label sets bound once (prom-client hashes the label object on every unbound call). */
  private readonly callsByLabels = new Map<string, { inc(): void }>();
  private readonly durationByTool = new Map<string, { observe(v: number): void }>();

  private bound(tool: string, backend: string, outcome: string): { inc(): void } {
    const key = `${tool}\u0000${backend}\u0000${outcome}`;
    let child = this.callsByLabels.get(key);
    if (!child) this.callsByLabels.set(key, (child = this.m.calls.labels({ tool, backend, outcome })));
    return child;
  }

  /** The HealthBook's onState: breaker transitions (the state gauge itself is read at scrape time). */
  backendState(tool: string, backend: string, state: BackendState): void {
    this.m.breakerTransitions.inc({ tool, backend, state });
  }

  /** One reload done (`failed`: it threw). Series of removed tools go, so label sets track the registry. */
  reloaded(result: { errors: readonly unknown[]; removed: readonly string[] } | 'failed'): void {
    if (result === 'failed') {
      this.m.reloads.inc({ result: 'error' });
      return;
    }
    this.m.reloads.inc({ result: result.errors.length > 0 ? 'error' : 'ok' });
    if (result.removed.length > 0) {
      const gone = new Set(result.removed);
      for (const key of this.callsByLabels.keys()) if (gone.has(key.slice(0, key.indexOf('\u0000')))) this.callsByLabels.delete(key);
      for (const tool of gone) this.durationByTool.delete(tool);
      void this.forget(gone);
    }
  }

  /** An MCP server's session is being re-established (server names come from tools.d, so labels stay bounded). */
  mcpRestarted(server: string): void {
    this.m.mcpRestarts.inc({ server });
  }

  /** A message /mcp or /sse refused at the protocol level (reasons: a fixed set, mcp-server/protocol-errors.ts). */
  mcpProtocolError(reason: string): void {
    this.m.mcpProtocolErrors.inc({ reason });
  }

  /** The prefilter's time to rank one query. */
  observeRoute(seconds: number): void {
    this.m.routeDuration.observe(seconds);
  }

  /** The text exposition and its content type. */
  async exposition(): Promise<{ contentType: string; text: string }> {
    const all = this.process ? Registry.merge([this.process, this.registry]) : this.registry;
    return { contentType: this.registry.contentType, text: await all.metrics() };
  }

  private async forget(tools: ReadonlySet<string>): Promise<void> {
    const { calls, callErrors, callDuration, breakerTransitions, resultFindings } = this.m;
    await Promise.all([dropTools(calls, tools), dropTools(callErrors, tools), dropTools(callDuration, tools), dropTools(breakerTransitions, tools), dropTools(resultFindings, tools)]);
  }
}

type Labels<T extends string> = Partial<Record<T, string | number>>;

/** Removes every series of a metric whose `tool` label is one of `tools` (histogram buckets included). */
async function dropTools<T extends string>(
  metric: { get(): Promise<{ values: { labels: Labels<T> }[] }>; remove(labels: Labels<T>): void },
  tools: ReadonlySet<string>,
): Promise<void> {
  const series = new Map<string, Labels<T>>();
  for (const { labels } of (await metric.get()).values) {
    const own = Object.fromEntries(Object.entries(labels).filter(([k]) => k !== 'le')) as Labels<T>;
    const tool: unknown = (own as Record<string, unknown>)['tool'];
    if (typeof tool === 'string' && tools.has(tool)) series.set(JSON.stringify(own), own);
  }
  for (const labels of series.values()) metric.remove(labels);
}
