import { GatewayError, isGatewayError } from '../errors.js';
import type { ProgressNote, ToolAdapter, UpstreamPayload } from '../adapters/types.js';
import type { BackendTarget, CompiledBackend, CompiledTool } from '../tools/types.js';
import { planAttempts, type Rng } from '../routing/select.js';
import type { RouteContext } from '../routing/match.js';
import type { HealthBook } from '../resilience/health.js';
import { backoffDelay } from '../resilience/backoff.js';
import { Cancel, sleep } from '../util/cancel.js';
import { callerGone } from './client-gone.js';
import type { Context } from '@opentelemetry/api';
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
  onClientGone?: ClientGoneHook | undefined;
}

/** Registers the call's cancel with whoever notices the client leave; returns the release. */
export type ClientGoneHook = (cancel: (reason: Error) => void) => () => void;

/**
 * Stage: runs the call on its backends under the tool's one deadline. A retryable failure moves the
 * call on (same priority first, then the next), only for idempotent tools unless the request cannot
 * have had an effect. When the deadline passes the signal aborts the upstream work and the call
 * fails with TIMEOUT at once, even if an adapter were slow to notice.
 */
export function execute(tool: CompiledTool, args: Readonly<Record<string, unknown>>, deps: ExecuteDeps, trail: PolicyTrail): Promise<Execution> {
  const deadline = Date.now() + tool.timeoutMs;
  const cancel = new Cancel();
  // One promise settled by whichever comes first: the attempts, the deadline, or the caller leaving
  // (no race of promises and no extra listener on the hot path).
  return new Promise<Execution>((resolve, reject) => {
    const stop = (reason: Error) => {
      if (cancel.aborted) return;
      cancel.abort(reason);
      reject(reason);
    };
    const timer = setTimeout(() => stop(timeoutError(tool)), tool.timeoutMs);
    const caller = deps.signal;
    // A cancel or shutdown of a long-running call gives its own reason; a client that left, this one.
    const onCallerGone = caller && (() => stop(isGatewayError(caller.reason) ? caller.reason : callerGone()));
    if (caller && onCallerGone) {
      if (caller.aborted) onCallerGone();
      else caller.addEventListener('abort', onCallerGone, { once: true });
    }
    const unhook = deps.onClientGone?.(stop);
    const settle = () => {
      clearTimeout(timer);
      unhook?.();
      if (onCallerGone) caller?.removeEventListener('abort', onCallerGone);
    };
    attemptLoop(tool, args, deps, trail, cancel, deadline).then(
      (out) => {
        settle();
        resolve(out); // ignored when the deadline already answered
      },
      (e: unknown) => {
        settle();
        reject(cancel.reason ?? e);
      },
    );
  });
}

async function attemptLoop(
  tool: CompiledTool,
  args: Readonly<Record<string, unknown>>,
  deps: ExecuteDeps,
  trail: PolicyTrail,
  cancel: Cancel,
  deadline: number,
): Promise<Execution> {
  const views = tool.backends.map((b) => deps.health.view(tool, b));
  const plan = planAttempts(views, deps.route, deps.rng);
  if (plan.length === 0) throw noBackend(tool, views);
  let index = 0;
  let transientTries = 0;
  for (;;) {
    const backend = plan[index % plan.length] as CompiledBackend;
    const span = deps.tracing && startAttempt(deps.tracing, deps, tool, backend, trail);
    try {
      trail.tried.push(backend.id);
      trail.attempts++;
      const payload = await deps.health.run(tool, backend, () => oneTry(tool, backend, args, deps, cancel, deadline, span));
      span?.ok();
      return { payload, backend };
    } catch (e) {
      span?.fail(e);
      if (!isGatewayError(e) || !e.upstream || cancel.aborted) throw e;
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
        if (Date.now() + wait >= deadline) throw e; // no time left for another try: answer with what we know
        await sleep(wait, cancel);
      }
    }
  }
}

async function oneTry(
  tool: CompiledTool,
  backend: CompiledBackend,
  args: Readonly<Record<string, unknown>>,
  deps: ExecuteDeps,
  callCancel: Cancel,
  deadline: number,
  span: AttemptSpan | undefined,
): Promise<UpstreamPayload> {
  const limit = tool.retry.tryTimeoutMs;
  const own = limit === undefined ? undefined : callCancel.child(limit, () => tryTimeoutError(backend, limit));
  const cancel = own ? own.cancel : callCancel;
  try {
    return await deps.adapters[backend.target.kind].call({ tool, backend, args, cancel, deadline, requestId: deps.requestId, onProgress: deps.onProgress, trace: span?.headers() });
  } catch (e) {
    // A try's own limit passed while the call has time left: a TIMEOUT the attempt loop may retry.
    if (cancel.aborted && !callCancel.aborted && cancel.reason) throw cancel.reason;
    throw e;
  } finally {
    own?.release();
  }
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
