import type { ClientChannel } from '../mcp/server-requests.js';
import { GatewayError, isGatewayError } from '../errors.js';
import type { ProgressNote, ToolAdapter, UpstreamPayload } from '../adapters/types.js';
import type { BackendTarget, CompiledBackend, CompiledTool } from '../tools/types.js';
import { planAttempts, type Rng } from '../routing/select.js';
import type { RouteContext } from '../routing/match.js';
import type { Attempt, BackendView, HealthBook } from '../resilience/health.js';
import { backoffDelay } from '../resilience/backoff.js';
import { Cancel, sleep } from '../util/cancel.js';
import { pending, type Settle } from '../util/settle.js';
import { callerGone } from './client-gone.js';
import type { Context } from '@opentelemetry/api';
import type { Caller } from '../auth/caller.js';
import type { AttemptSpan, Tracing } from '../tracing/index.js';

export type Adapters = Readonly<Record<BackendTarget['kind'], ToolAdapter>>;

/** What a call did on its way: written to the response and the audit record. */
export interface PolicyTrail {
  tried: string[];
  attempts: number;
  retries: number;
  failover: boolean;
  breakerRejections: string[];
  fallback?: { kind: string; reason: string; tool?: string; ageSeconds?: number };
  replayed?: boolean;
  /** Answered from the result cache: no upstream call. */
  cached?: boolean;
  /** Result-guard findings whose action is `flag`: the result is shown, and the client is told (SPEC §6). */
  findings?: { kind: string; action: string; count: number; note?: string }[];
}

export function newTrail(): PolicyTrail {
  return { tried: [], attempts: 0, retries: 0, failover: false, breakerRejections: [] };
}

export interface Execution {
  payload: UpstreamPayload;
  backend: CompiledBackend;
}

export interface ExecuteDeps {
  adapters: Adapters;
  health: HealthBook;
  rng: Rng;
  requestId: string;
  route: RouteContext;
  signal?: AbortSignal | undefined;
  onProgress?: ((p: ProgressNote) => void) | undefined;
  /** Set when tracing is on: each attempt gets a span, child of `traceContext` (the call's span). */
  tracing?: Tracing | undefined;
  traceContext?: Context | undefined;
  onClientGone?: ClientGone | undefined;
  /** The secret values, for adapters that cut upstream text (they mask it first). */
  secrets?: ReadonlySet<string> | undefined;
  /** The caller, for upstream credentials that act on its behalf. */
  caller?: Caller | undefined;
  /** The MCP client of the call, for an MCP server's requests to it (sampling, elicitation, roots). */
  clientChannel?: ClientChannel | undefined;
  sessionId?: string | undefined;
}

/** A running call as its watchers see it: `stop` ends it with a reason (the first one wins). */
export interface RunningCall {
  stop(reason: Error): void;
}

/** Whoever notices the client leave: told of the call when it starts and when it settles. */
export interface ClientGone {
  attach(call: RunningCall): void;
  detach(call: RunningCall): void;
}

const ONCE = { once: true } as const;

/**
 * Stage: runs the call on its backends under the tool's one deadline. A retryable failure moves the
 * call on (same priority first, then the next), only for idempotent tools unless the request cannot
 * have had an effect. When the deadline passes the signal aborts the upstream work and the call
 * fails with TIMEOUT at once, even if an adapter were slow to notice.
 */
export function execute(tool: CompiledTool, args: Readonly<Record<string, unknown>>, deps: ExecuteDeps, trail: PolicyTrail): Promise<Execution> {
  return new Run(tool, args, deps, trail).start();
}

/**
 * One call's run: a single promise settled by whichever comes first, the attempts, the deadline
 * or the caller leaving. The object is the timer's argument, the caller signal's listener, the
 * client watch's call and the breaker's attempt, so the per-call path makes no closures.
 */
class Run implements RunningCall, Settle<Execution>, Attempt<UpstreamPayload> {
  readonly cancel = new Cancel();
  resolve!: (out: Execution) => void;
  reject!: (e: unknown) => void;
  private readonly deadline: number;
  private timer: NodeJS.Timeout | undefined;
  /** The attempt in progress (read by `tryOnce`). */
  private backend: CompiledBackend | undefined;
  private span: AttemptSpan | undefined;

  constructor(
    readonly tool: CompiledTool,
    private readonly args: Readonly<Record<string, unknown>>,
    private readonly deps: ExecuteDeps,
    private readonly trail: PolicyTrail,
  ) {
    this.deadline = Date.now() + tool.timeoutMs;
  }

  start(): Promise<Execution> {
    const done = pending(this);
    this.timer = setTimeout(deadlinePassed, this.tool.timeoutMs, this);
    const caller = this.deps.signal;
    if (caller) {
      if (caller.aborted) this.handleEvent();
      else caller.addEventListener('abort', this, ONCE);
    }
    this.deps.onClientGone?.attach(this);
    void this.attempts();
    return done;
  }

  stop(reason: Error): void {
    if (this.cancel.aborted) return;
    this.cancel.abort(reason);
    this.reject(reason);
  }

  /** The caller's signal aborted: a cancel or shutdown of a long-running call gives its own reason; a client that left, this one. */
  handleEvent(): void {
    const reason: unknown = this.deps.signal?.reason;
    this.stop(isGatewayError(reason) ? reason : callerGone());
  }

  private async attempts(): Promise<void> {
    try {
      const out = await this.loop();
      this.settle();
      this.resolve(out); // ignored when the deadline already answered
    } catch (e) {
      this.settle();
      this.reject(this.cancel.reason ?? e);
    }
  }

  private settle(): void {
    clearTimeout(this.timer);
    this.deps.onClientGone?.detach(this);
    this.deps.signal?.removeEventListener('abort', this);
  }

  private async loop(): Promise<Execution> {
    const { tool, deps, trail } = this;
    const views: BackendView[] = [];
    for (const b of tool.backends) views.push(deps.health.view(tool, b));
    const plan = planAttempts(views, deps.route, deps.rng);
    if (plan.length === 0) throw noBackend(tool, views);
    let index = 0;
    let transientTries = 0;
    for (;;) {
      const backend = (this.backend = plan[index % plan.length] as CompiledBackend);
      const span = (this.span = deps.tracing && startAttempt(deps.tracing, deps, tool, backend, trail));
      try {
        trail.tried.push(backend.id);
        trail.attempts++;
        const payload = await deps.health.run(tool, backend, this);
        span?.ok();
        return { payload, backend };
      } catch (e) {
        span?.fail(e);
        if (!isGatewayError(e) || !e.upstream || this.cancel.aborted) throw e;
        const rejectedByBreaker = e.code === 'CIRCUIT_OPEN';
        if (rejectedByBreaker) {
          trail.attempts--; // the upstream was never touched
          trail.breakerRejections.push(backend.id);
        }
        const tried = new Set(trail.tried);
        const untried = plan.slice(index + 1).some((b) => !tried.has(b.id));
        const moveWithoutEffect = (e.upstream.noEffect || rejectedByBreaker) && untried;
        if (e.upstream.transient && !rejectedByBreaker) transientTries++;
        const retry = tool.idempotent && e.upstream.transient && transientTries < tool.retry.attempts;
        if (!moveWithoutEffect && !retry) throw e;
        index++;
        const next = plan[index % plan.length] as CompiledBackend;
        if (next.id !== backend.id) trail.failover = true;
        else {
          trail.retries++;
          const wait = Math.max(backoffDelay(tool.retry.backoffMs, trail.retries, deps.rng), e.upstream.retryAfterMs ?? 0);
          if (Date.now() + wait >= this.deadline) throw e; // no time left for another try: answer with what we know
          await sleep(wait, this.cancel);
        }
      }
    }
  }

  /** One try on the current backend (the breaker runs it), under its own limit when the tool sets one. */
  async tryOnce(): Promise<UpstreamPayload> {
    const { tool, deps } = this;
    const backend = this.backend as CompiledBackend;
    const limit = tool.retry.tryTimeoutMs;
    const own = limit === undefined ? undefined : this.cancel.child(limit, () => tryTimeoutError(backend, limit));
    const cancel = own ? own.cancel : this.cancel;
    try {
      return await deps.adapters[backend.target.kind].call({ tool, backend, args: this.args, cancel, deadline: this.deadline, requestId: deps.requestId, onProgress: deps.onProgress, trace: this.span?.headers(), secrets: deps.secrets, caller: deps.caller, clientChannel: deps.clientChannel, sessionId: deps.sessionId });
    } catch (e) {
      // A try's own limit passed while the call has time left: a TIMEOUT the attempt loop may retry.
      if (cancel.aborted && !this.cancel.aborted && cancel.reason) throw cancel.reason;
      throw e;
    } finally {
      own?.release();
    }
  }
}

function deadlinePassed(run: Run): void {
  run.stop(timeoutError(run.tool));
}

function tryTimeoutError(backend: CompiledBackend, limit: number): GatewayError {
  return new GatewayError('TIMEOUT', `backend '${backend.id}' did not answer within ${limit} ms`, {
    upstream: { transient: true, noEffect: false },
  });
}

function startAttempt(tracing: Tracing, deps: ExecuteDeps, tool: CompiledTool, backend: CompiledBackend, trail: PolicyTrail): AttemptSpan {
  return tracing.startAttempt(deps.traceContext, {
    tool,
    backend,
    attempt: trail.tried.length + 1,
    breakerState: deps.health.view(tool, backend).state,
    previous: trail.tried.at(-1),
  });
}

function timeoutError(tool: CompiledTool): GatewayError {
  return new GatewayError('TIMEOUT', `'${tool.name}' did not finish within ${tool.timeoutMs} ms; the upstream request was aborted`, {
    upstream: { transient: true, noEffect: false },
  });
}

function noBackend(tool: CompiledTool, views: readonly { state: string; retryAfterMs: number | undefined }[]): GatewayError {
  const open = views.filter((v) => v.state === 'open');
  if (open.length > 0) {
    const retryAfterMs = Math.min(...open.map((v) => v.retryAfterMs ?? 0));
    return new GatewayError('CIRCUIT_OPEN', `every backend of '${tool.name}' is open or disabled`, {
      retryAfterSeconds: retryAfterMs / 1000,
      upstream: { transient: false, noEffect: true, retryAfterMs },
    });
  }
  if (views.length > 0 && views.every((v) => v.state === 'disabled')) {
    return new GatewayError('BACKEND_DISABLED', `every backend of '${tool.name}' was disabled after refusing our credentials`, {
      upstream: { transient: false, noEffect: true },
    });
  }
  if (views.length > 0 && views.every((v) => v.state === 'unhealthy' || v.state === 'disabled')) {
    return new GatewayError('UNAVAILABLE', `every backend of '${tool.name}' is failing its health probe`, { upstream: { transient: false, noEffect: true } });
  }
  return new GatewayError('UNAVAILABLE', `no backend of '${tool.name}' serves this request`, { upstream: { transient: false, noEffect: true } });
}
