import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  defaultTextMapGetter,
  defaultTextMapSetter,
  trace,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { createRequire } from 'node:module';
import type { Config } from '../config/schema.js';
import type { BackendState } from '../resilience/health.js';
import type { CompiledBackend, CompiledTool } from '../tools/types.js';

export type TracingConfig = Config['tracing'];

/** How long close() waits for the last spans to reach the collector. */
const CLOSE_BOUND_MS = 2000;

const require = createRequire(import.meta.url);

/**
 * The SDK, exporter and propagator (~3 MB of RSS), required when a gateway turns tracing on: with
 * tracing off (the default) they are never loaded. Synchronous (these packages are CommonJS), so
 * Tracing.create stays synchronous.
 */
function sdk(): {
  core: typeof import('@opentelemetry/core');
  exporter: typeof import('@opentelemetry/exporter-trace-otlp-http');
  resources: typeof import('@opentelemetry/resources');
  base: typeof import('@opentelemetry/sdk-trace-base');
  semconv: typeof import('@opentelemetry/semantic-conventions');
} {
  return {
    core: require('@opentelemetry/core') as typeof import('@opentelemetry/core'),
    exporter: require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http'),
    resources: require('@opentelemetry/resources') as typeof import('@opentelemetry/resources'),
    base: require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base'),
    semconv: require('@opentelemetry/semantic-conventions') as typeof import('@opentelemetry/semantic-conventions'),
  };
}

/**
 * OpenTelemetry tracing of calls, one per gateway (never the global provider: two gateways in one
 * process, as in the tests, keep their spans apart). Contexts are passed down explicitly, so no
 * global context manager is needed. Only names, ids, outcomes and error codes become attributes,
 * never argument values.
 */
export class Tracing {
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;
  private readonly propagator: W3CTraceContextPropagator;

  /** undefined when tracing is off: every hook is an `?.` on it, so the off path allocates nothing. */
  static create(cfg: TracingConfig): Tracing | undefined {
    return cfg.enabled ? new Tracing(cfg) : undefined;
  }

  private constructor(cfg: TracingConfig) {
    const { core, exporter: otlp, resources, base, semconv } = sdk();
    const { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } = base;
    this.propagator = new core.W3CTraceContextPropagator();
    const exporter = new otlp.OTLPTraceExporter({ url: cfg.endpoint, headers: { ...cfg.headers }, timeoutMillis: cfg.exportTimeoutMs });
    this.provider = new BasicTracerProvider({
      resource: resources.resourceFromAttributes({ [semconv.ATTR_SERVICE_NAME]: cfg.serviceName }),
      // An agent's sampled flag is honoured; calls without a parent are sampled at the ratio.
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(cfg.sampleRatio) }),
      spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: cfg.exportDelayMs })],
    });
    this.tracer = this.provider.getTracer('toolgate');
  }

  /** The span of one call, child of the agent's `traceparent` (or of `parent`, a fallback call's caller). */
  startCall(req: { toolName: string; caller: { id: string }; headers?: Readonly<Record<string, unknown>> | undefined; traceContext?: Context | undefined }, callId: string): CallSpan {
    const parent = req.traceContext ?? this.propagator.extract(ROOT_CONTEXT, req.headers ?? {}, defaultTextMapGetter);
    const span = this.tracer.startSpan(
      `toolgate.call ${req.toolName}`,
      { kind: SpanKind.SERVER, attributes: { 'toolgate.tool': req.toolName, 'toolgate.call_id': callId, 'toolgate.caller': req.caller.id } },
      parent,
    );
    return new CallSpan(span, trace.setSpan(parent, span));
  }

  /** The span of one attempt on one backend, child of the call's span. */
  startAttempt(parent: Context | undefined, a: { tool: CompiledTool; backend: CompiledBackend; attempt: number; breakerState: BackendState; previous: string | undefined }): AttemptSpan {
    const ctx = parent ?? ROOT_CONTEXT;
    const span = this.tracer.startSpan(
      `toolgate.attempt ${a.backend.id}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'toolgate.tool': a.tool.name,
          'toolgate.backend': a.backend.id,
          'toolgate.backend_kind': a.backend.target.kind,
          'toolgate.attempt': a.attempt,
          'toolgate.breaker_state': a.breakerState,
          'toolgate.retry': a.previous !== undefined && a.previous === a.backend.id,
          'toolgate.failover': a.previous !== undefined && a.previous !== a.backend.id,
        },
      },
      ctx,
    );
    return new AttemptSpan(span, trace.setSpan(ctx, span), this.propagator);
  }

  /** Sends what is buffered (bounded), then stops the exporter. */
  async close(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, CLOSE_BOUND_MS);
      timer.unref();
    });
    const done = this.provider
      .forceFlush({ timeoutMillis: CLOSE_BOUND_MS })
      .catch(() => undefined)
      .then(() => this.provider.shutdown())
      .catch(() => undefined);
    try {
      await Promise.race([done, bound]);
    } finally {
      clearTimeout(timer);
    }
  }
}

export type CallOutcome = 'ok' | 'error' | 'fallback' | 'pending_confirmation' | 'replayed';

/** A call's span and bookkeeping; ended once, in the pipeline's `finally`. */
export class CallSpan {
  private outcome: CallOutcome | undefined;

  constructor(
    private readonly span: Span,
    /** The context under which the attempts (and a fallback tool's call) run. */
    readonly context: Context,
  ) {}

  /** An answer without an upstream call: a gated call's 202, an idempotent replay. */
  settled(outcome: CallOutcome): void {
    this.outcome = outcome;
  }

  fail(err: { code: string }): void {
    this.outcome = 'error';
    this.span.setAttribute('toolgate.error_code', err.code);
    // The code only: messages may quote upstream bodies.
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: err.code });
  }

  end(trail: { attempts: number; tried: readonly string[]; fallback?: { kind: string } | undefined; cached?: boolean | undefined }, backend: string | undefined): void {
    const outcome = this.outcome ?? (trail.fallback ? 'fallback' : 'ok');
    const s = this.span;
    s.setAttribute('toolgate.outcome', outcome);
    s.setAttribute('toolgate.attempts', trail.attempts);
    const used = backend ?? trail.tried.at(-1);
    if (used !== undefined) s.setAttribute('toolgate.backend', used);
    s.setAttribute('toolgate.cached', trail.cached === true);
    if (trail.fallback) s.setAttribute('toolgate.fallback', trail.fallback.kind);
    s.end();
  }
}

/** One attempt's span; its context is what the upstream is told (traceparent, MCP `_meta`). */
export class AttemptSpan {
  constructor(
    private readonly span: Span,
    readonly context: Context,
    private readonly propagator: W3CTraceContextPropagator,
  ) {}

  /** `traceparent` (and `tracestate`) of this attempt, for the upstream request. */
  headers(): Record<string, string> {
    const carrier: Record<string, string> = {};
    this.propagator.inject(this.context, carrier, defaultTextMapSetter);
    return carrier;
  }

  ok(): void {
    this.span.setAttribute('toolgate.outcome', 'ok');
    this.span.end();
  }

  fail(e: unknown): void {
    const code = typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'string' ? (e as { code: string }).code : 'INTERNAL';
    const status = (e as { upstream?: { status?: unknown } } | null)?.upstream?.status;
    this.span.setAttribute('toolgate.outcome', 'error');
    this.span.setAttribute('toolgate.error_code', code);
    if (typeof status === 'number') this.span.setAttribute('http.response.status_code', status);
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: code });
    this.span.end();
  }
}
