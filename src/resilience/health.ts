import CircuitBreaker from 'opossum';
import { EventEmitter } from 'node:events';
import { GatewayError, isGatewayError } from '../errors.js';
import type { CompiledBackend, CompiledTool } from '../tools/types.js';

/** `unhealthy`: its active probe failed (resilience/probes.ts); routing skips it like an open breaker. */
export type BackendState = 'closed' | 'half_open' | 'open' | 'disabled' | 'unhealthy';

/** What routing and operators see of one backend. */
export interface BackendView {
  readonly backend: CompiledBackend;
  readonly state: BackendState;
  /** Exponentially weighted share of transient failures, 0..1. */
  readonly errorRate: number;
  /** Exponentially weighted latency of successful calls, when any. */
  readonly latencyMs: number | undefined;
  readonly retryAfterMs: number | undefined;
}

/** One attempt on a backend, as the breaker runs it (an object, not a closure per call). */
export interface Attempt<T> {
  tryOnce(): Promise<T>;
}

const fireAttempt = (attempt: Attempt<unknown>): Promise<unknown> => attempt.tryOnce();

/** An open or a close, for replicas to share (resilience/breaker-sync.ts). */
export interface BreakerTransition {
  readonly tool: string;
  readonly backend: string;
  /** The backend's definition hash: replicas follow each other only on the same definition. */
  readonly hash: string;
  readonly state: 'open' | 'closed';
  /** Caused by force(), i.e. by another replica: not to be published again. */
  readonly remote: boolean;
}

interface Entry {
  readonly tool: string;
  readonly backendId: string;
  readonly breaker: CircuitBreaker<[Attempt<unknown>], unknown>;
  readonly resetTimeoutMs: number;
  openedAt: number | undefined;
  errorRate: number;
  latencyMs: number | undefined;
}

const ALPHA = 0.2;

/** Only transient upstream failures count against a breaker; client errors, refusals and lost MCP sessions do not. */
function countsAsFailure(err: unknown): boolean {
  return isGatewayError(err) && err.upstream?.transient === true && err.upstream.notCountedByBreaker !== true;
}

/**
 * One opossum breaker and health record per backend. Keyed by tool, backend id and the backend's
 * definition hash, so state survives a reload that leaves the backend unchanged. opossum's own
 * timeout is off (the pipeline's deadline aborts the upstream call itself) and a volume floor keeps
 * a cold breaker from opening on its first failure.
 */
/**
 * One timer rotating the rolling windows' buckets of every breaker with the same window (opossum's
 * `rotateBucketController`; 10 buckets, as opossum's default), instead of one interval per breaker.
 */
const rotators = new Map<number, EventEmitter>();
const BUCKETS = 10;
function rotatorFor(windowMs: number): EventEmitter {
  let rotator = rotators.get(windowMs);
  if (rotator) return rotator;
  const created = new EventEmitter().setMaxListeners(0);
  setInterval(() => created.emit('rotate'), Math.floor(windowMs / BUCKETS)).unref();
  rotators.set(windowMs, created);
  return created;
}

export class HealthBook {
  private readonly entries = new Map<string, Entry>();
  /** Backends refused with 401/403, until their tool file changes (value: the file hash then). */
  private readonly disabled = new Map<string, string>();
  /** Backends whose active probe reports them down. */
  private readonly unhealthy = new Set<string>();
  private readonly transitions = new Set<(t: BreakerTransition) => void>();
  private forcing = false;

  constructor(private readonly onState?: (tool: string, backend: string, state: BackendState) => void) {}

  private key(tool: CompiledTool, b: CompiledBackend): string {
    return `${tool.name}\u0000${b.id}\u0000${b.hash}`;
  }

  private entry(tool: CompiledTool, b: CompiledBackend): Entry {
    const key = this.key(tool, b);
    let e = this.entries.get(key);
    if (e) return e;
    const cfg = tool.breaker;
    const breaker = new CircuitBreaker<[Attempt<unknown>], unknown>(fireAttempt, {
      timeout: false,
      enableSnapshots: false, // no per-breaker snapshot timer: we read state on demand
      rollingPercentilesEnabled: false, // latency is kept here (EWMA); no per-call array of latencies
      resetTimeout: cfg.resetTimeoutMs,
      rollingCountTimeout: cfg.rollingCountTimeoutMs,
      rollingCountBuckets: BUCKETS,
      rotateBucketController: rotatorFor(cfg.rollingCountTimeoutMs),
      volumeThreshold: cfg.volumeThreshold,
      errorThresholdPercentage: cfg.errorThresholdPercentage ?? 50,
      errorFilter: (err: unknown) => !countsAsFailure(err),
    });
    const created: Entry = { tool: tool.name, backendId: b.id, breaker, resetTimeoutMs: cfg.resetTimeoutMs, openedAt: undefined, errorRate: 0, latencyMs: undefined };
    breaker.on('open', () => {
      created.openedAt = Date.now();
      this.onState?.(tool.name, b.id, 'open');
      this.transition(tool, b, 'open');
    });
    breaker.on('halfOpen', () => this.onState?.(tool.name, b.id, 'half_open'));
    breaker.on('close', () => {
      created.openedAt = undefined;
      this.onState?.(tool.name, b.id, 'closed');
      this.transition(tool, b, 'closed');
    });
    this.entries.set(key, created);
    e = created;
    return e;
  }

  view(tool: CompiledTool, b: CompiledBackend): BackendView {
    const key = this.key(tool, b);
    const e = this.entries.get(key);
    const disabled = this.disabled.size > 0 && this.disabled.get(key) === tool.source.hash;
    const state: BackendState = disabled
      ? 'disabled'
      : this.unhealthy.size > 0 && this.unhealthy.has(key)
        ? 'unhealthy'
        : !e || e.breaker.closed
          ? 'closed'
          : e.breaker.halfOpen
            ? 'half_open'
            : 'open';
    const retryAfterMs = state === 'open' && e?.openedAt !== undefined ? Math.max(0, e.openedAt + e.resetTimeoutMs - Date.now()) : undefined;
    return { backend: b, state, errorRate: e?.errorRate ?? 0, latencyMs: e?.latencyMs, retryAfterMs };
  }

  /** Runs one attempt through the backend's breaker; an open breaker answers CIRCUIT_OPEN untouched. */
  async run<T>(tool: CompiledTool, b: CompiledBackend, attempt: Attempt<T>): Promise<T> {
    const e = this.entry(tool, b);
    const started = performance.now();
    try {
      const out = (await e.breaker.fire(attempt)) as T;
      e.latencyMs = e.latencyMs === undefined ? performance.now() - started : e.latencyMs + ALPHA * (performance.now() - started - e.latencyMs);
      e.errorRate *= 1 - ALPHA;
      return out;
    } catch (err) {
      if ((err as { code?: string }).code === 'EOPENBREAKER') {
        const retryAfterMs = this.view(tool, b).retryAfterMs ?? e.resetTimeoutMs;
        throw new GatewayError('CIRCUIT_OPEN', `backend '${b.id}' of '${tool.name}' is open after repeated failures`, {
          retryAfterSeconds: retryAfterMs / 1000,
          upstream: { transient: false, noEffect: true, retryAfterMs },
        });
      }
      e.errorRate = e.errorRate * (1 - ALPHA) + (countsAsFailure(err) ? ALPHA : 0);
      if (isGatewayError(err) && err.upstream?.disable) {
        this.disabled.set(this.key(tool, b), tool.source.hash);
        this.onState?.(tool.name, b.id, 'disabled');
      }
      throw err;
    }
  }

  private transition(tool: CompiledTool, b: CompiledBackend, state: 'open' | 'closed'): void {
    const t: BreakerTransition = { tool: tool.name, backend: b.id, hash: b.hash, state, remote: this.forcing };
    for (const l of this.transitions) l(t);
  }

  /** Listens to every open and close; returns the unsubscribe. */
  onTransition(listener: (t: BreakerTransition) => void): () => void {
    this.transitions.add(listener);
    return () => this.transitions.delete(listener);
  }

  /**
   * Follows another replica: opens (the reset timeout then half-opens it as usual) or closes this
   * backend's breaker. The local breaker keeps counting on its own, with or without Redis.
   */
  force(tool: CompiledTool, b: CompiledBackend, state: 'open' | 'closed'): void {
    const e = this.entry(tool, b);
    this.forcing = true;
    try {
      if (state === 'open') e.breaker.open();
      else e.breaker.close();
    } finally {
      this.forcing = false;
    }
  }

  /** An admin puts a disabled backend back into service. True when it was disabled. */
  enable(tool: CompiledTool, backendId: string): boolean {
    const b = tool.backends.find((x) => x.id === backendId);
    if (!b) return false;
    const was = this.disabled.delete(this.key(tool, b));
    if (was) this.onState?.(tool.name, b.id, 'closed');
    return was;
  }

  /** The prober's verdict: out of routing (false) or back in (true). Told only on a change. */
  setProbeHealth(tool: CompiledTool, b: CompiledBackend, healthy: boolean): void {
    const key = this.key(tool, b);
    if (healthy !== this.unhealthy.has(key)) return;
    if (healthy) this.unhealthy.delete(key);
    else this.unhealthy.add(key);
    this.onState?.(tool.name, b.id, this.view(tool, b).state);
  }

  /** After a reload: drop (and stop) breakers of backends that are gone or changed. */
  retain(tools: readonly CompiledTool[]): void {
    const live = new Set(tools.flatMap((t) => t.backends.map((b) => this.key(t, b))));
    for (const [k, e] of this.entries) {
      if (!live.has(k)) {
        e.breaker.shutdown();
        this.entries.delete(k);
      }
    }
    for (const k of this.disabled.keys()) if (!live.has(k)) this.disabled.delete(k);
    for (const k of this.unhealthy) if (!live.has(k)) this.unhealthy.delete(k);
  }

  close(): void {
    for (const e of this.entries.values()) e.breaker.shutdown();
    this.entries.clear();
  }
}
