import { GatewayError, isGatewayError } from '../errors.js';
import type { Caller } from '../auth/caller.js';
import type { ProgressNote, ToolResult } from '../adapters/types.js';
import type { AuditSink } from '../audit/types.js';
import type { Config } from '../config/schema.js';
import type { HealthBook } from '../resilience/health.js';
import { Bulkhead } from '../resilience/bulkhead.js';
import type { Rng } from '../routing/select.js';
import type { StateStore } from '../state/types.js';
import type { Registry } from '../tools/registry.js';
import type { CompiledTool } from '../tools/types.js';
import { ResultCache } from '../cache/result-cache.js';
import { digest } from '../util/hash.js';
import { newId } from '../util/ids.js';
import { execute, newTrail, type Adapters, type PolicyTrail } from './execute.js';
import { fallbackFor } from './fallback.js';
import { Idempotency } from './idempotency.js';
import { checkLoop } from './loop-guard.js';
import { checkRateLimits } from './rate-limit.js';
import { normalizeResult } from './normalize.js';
import { resolveTool } from './resolve.js';
import { validateArguments } from './validate.js';
import { reportCall, scrubError } from './report.js';
import { checkGuards } from '../guards/index.js';
import { needsConfirmation } from '../confirm/rule.js';

export interface CallRequest {
  toolName: string;
  args: unknown;
  sessionId?: string | undefined;
  caller: Caller;
  requestId: string;
  idempotencyKey?: string | undefined;
  /** Set when running a call that was approved: the gate is passed, and the audit names both. */
  approval?: { confirmationId: string; approver: string; callId: string } | undefined;
  /** Request headers, for backends' match rules. */
  headers?: Readonly<Record<string, string | string[] | undefined>>;
  /** Aborts when the client goes away (or a long-running call is cancelled). */
  signal?: AbortSignal | undefined;
  /** Told of the upstream's progress (long-running calls' events). */
  onProgress?: ((p: ProgressNote) => void) | undefined;
}

export interface CallResponse {
  callId: string;
  tool: string;
  status: 'ok';
  backend: string;
  attempts: number;
  durationMs: number;
  responseHash: string;
  fallback: null | { kind: string; reason: string; tool?: string; ageSeconds?: number };
  policy: PolicyTrail;
  result: ToolResult;
  /** Answered from the result cache (`cache: { ttlSeconds }`): no upstream call. */
  cached?: true;
}

/** A gated call (202): it runs when someone allowed to approves it. */
export interface PendingResponse {
  callId: string;
  tool: string;
  status: 'pending_confirmation';
  confirmation: { id: string; expiresAt: string; summary: string };
}

export interface PipelineDeps {
  registry: () => Registry;
  adapters: Adapters;
  audit: AuditSink;
  health: HealthBook;
  state: StateStore;
  limits: Config['limits'];
  secrets: ReadonlySet<string>;
  rng: Rng;
  /** The clock of the result cache's ages (tests inject one). */
  now?: () => number;
  /** The gate stage: opens a confirmation for a call that needs one. */
  gate: (tool: CompiledTool, args: Record<string, unknown>, req: CallRequest, callId: string) => Promise<PendingResponse>;
  /** Told when a stage degrades instead of failing (loop guard, rate limits with the shared store down). */
  onWarning?: (msg: string, err?: unknown) => void;
  /** Told of every finished call (metrics). */
  onCallEnd?: (e: { tool: string; backend: string; outcome: 'ok' | 'error' | 'fallback'; errorCode?: string; seconds: number }) => void;
}


/**
 * The composer: resolve → validate → idempotency → loop guard → bulkhead → execute (routing,
 * breakers, retries) → fallback → normalize → audit. Every call, refused or run, leaves exactly
 * one audit record; every failure is a GatewayError.
 */
export class CallPipeline {
  private readonly bulkhead = new Bulkhead();
  private readonly idempotency: Idempotency<CallResponse | PendingResponse>;
  private readonly cache: ResultCache;

  constructor(private readonly deps: PipelineDeps) {
    this.cache = new ResultCache(deps.state, { ...(deps.now ? { now: deps.now } : {}), ...(deps.onWarning ? { onWarning: deps.onWarning } : {}) });
    this.idempotency = new Idempotency(deps.state, deps.limits.idempotencyTtlSeconds * 1000);
  }

  async call(req: CallRequest, fallbackDepth = 0): Promise<CallResponse | PendingResponse> {
    const started = performance.now();
    const callId = req.approval?.callId ?? newId('c');
    const trail = newTrail();
    let tool: CompiledTool | undefined;
    let backend: string | undefined;
    let claimed = false;
    let argsDigest: string | undefined;
    const caller = req.caller.id;
    try {
      tool = resolveTool(this.deps.registry(), req.toolName, req.caller);
      const args = validateArguments(tool, req.args);
      checkGuards(tool, args);
      // An approved call was counted when it was asked for; a fallback counts as its first call.
      if (!req.approval && fallbackDepth === 0) await checkRateLimits(this.deps.state, { caller: this.deps.limits.rateLimit, tool: tool.rateLimit }, { caller, tool: tool.name }, this.deps.onWarning);
      argsDigest = digest(args);
      const idemDigest = req.idempotencyKey ? digest({ tool: tool.name, args }) : '';
      if (req.idempotencyKey && !req.approval) {
        const prior = await this.idempotency.begin(caller, req.idempotencyKey, idemDigest);
        if (prior) return this.replay(req, tool, prior.replay, started);
        claimed = true;
      }
      if (!req.approval) {
        await checkLoop(this.deps.state, this.deps.limits, { caller, sessionId: req.sessionId, tool: tool.name, argsDigest }, this.deps.onWarning);
        if (needsConfirmation(tool.confirm, args)) {
          const pending = await this.deps.gate(tool, args, req, callId);
          if (claimed) await this.idempotency.complete(caller, req.idempotencyKey as string, idemDigest, pending);
          const durationMs = Math.round(performance.now() - started);
          reportCall(this.deps, req, tool, callId, trail, { outcome: 'pending_confirmation', backend: undefined, durationMs, confirmationId: pending.confirmation.id, argsDigest }, started);
          return pending;
        }
      }
      const hit = await this.fromCache(tool, args, trail);
      const { result, usedBackend, fallback } = hit ?? (await this.run(tool, args, req, trail, fallbackDepth));
      backend = usedBackend;
      const durationMs = Math.round(performance.now() - started);
      const response: CallResponse = {
        callId,
        tool: tool.name,
        status: 'ok',
        backend,
        attempts: trail.attempts,
        durationMs,
        responseHash: digest(result),
        fallback: fallback ?? null,
        policy: trail,
        result,
        ...(trail.cached ? { cached: true as const } : {}),
      };
      if (claimed) await this.idempotency.complete(caller, req.idempotencyKey as string, idemDigest, response);
      reportCall(this.deps, req, tool, callId, trail, { outcome: fallback ? 'fallback' : 'ok', backend, durationMs, responseHash: response.responseHash, argsDigest }, started);
      return response;
    } catch (e) {
      if (claimed) await this.idempotency.abandon(caller, req.idempotencyKey as string).catch(() => undefined);
      const err = isGatewayError(e) ? e : new GatewayError('INTERNAL', 'the call failed inside the gateway', { cause: e });
      const durationMs = Math.round(performance.now() - started);
      reportCall(this.deps, req, tool, callId, trail, { outcome: 'error', backend: backend ?? trail.tried.at(-1), durationMs, errorCode: err.code, argsDigest }, started);
      throw scrubError(err, this.deps.secrets);
    }
  }

  private replay(req: CallRequest, tool: CompiledTool, prior: CallResponse | PendingResponse, started: number): CallResponse | PendingResponse {
    if (prior.status === 'pending_confirmation') {
      reportCall(this.deps, req, tool, prior.callId, { ...newTrail(), replayed: true }, { outcome: 'pending_confirmation', backend: undefined, durationMs: 0, confirmationId: prior.confirmation.id }, started);
      return prior;
    }
    const policy = { ...prior.policy, replayed: true };
    reportCall(this.deps, req, tool, prior.callId, policy, { outcome: 'ok', backend: prior.backend, durationMs: 0, responseHash: prior.responseHash }, started);
    return { ...prior, policy };
  }

  /** Bulkhead, execute, and on a backend failure the tool's fallback. */
  private async run(tool: CompiledTool, args: Record<string, unknown>, req: CallRequest, trail: PolicyTrail, depth: number) {
    const release = this.bulkhead.acquire(tool);
    try {
      const run = await execute(
        tool,
        args,
        { ...this.deps, requestId: req.requestId, signal: req.signal, onProgress: req.onProgress, route: { caller: req.caller.id, headers: req.headers ?? {} } },
        trail,
      );
      const result = normalizeResult(tool, run.payload);
      this.remember(tool, args, result);
      return { result, usedBackend: run.backend.id, fallback: undefined };
    } catch (e) {
      const plan = isGatewayError(e) && depth === 0 ? fallbackFor(tool, e) : undefined;
      if (!plan || !isGatewayError(e)) throw e;
      if (plan.kind === 'tool') {
        const other = await this.call({ ...req, toolName: plan.tool, args, idempotencyKey: undefined }, depth + 1);
        if (other.status !== 'ok') throw e; // a gated fallback cannot answer now
        trail.fallback = { kind: 'tool', reason: e.code, tool: other.tool };
        return { result: other.result, usedBackend: `${other.tool}/${other.backend}`, fallback: trail.fallback };
      }
      if (plan.kind === 'cache') {
        const last = await this.cache.lastGood(tool.name, args);
        if (!last) throw e; // nothing good to repeat: the failure stands
        const ageSeconds = this.cache.ageSeconds(last);
        trail.fallback = { kind: 'cache', reason: e.code, ageSeconds };
        const note = { type: 'text', text: `[from cache, ${ageSeconds} s old: the tool is failing now]` };
        return { result: { ...last.result, content: [note, ...last.result.content] }, usedBackend: 'fallback', fallback: trail.fallback };
      }
      trail.fallback = { kind: plan.kind, reason: e.code };
      return { result: plan.result, usedBackend: 'fallback', fallback: trail.fallback };
    } finally {
      release();
    }
  }

  /** A fresh cached result for these arguments, when the tool caches. */
  private async fromCache(tool: CompiledTool, args: Record<string, unknown>, trail: PolicyTrail) {
    if (tool.cacheTtlSeconds <= 0) return undefined;
    const hit = await this.cache.get(tool.name, args);
    if (!hit) return undefined;
    trail.cached = true;
    return { result: hit.result, usedBackend: 'cache', fallback: undefined };
  }

  /** Keeps a fresh upstream result for the cache and the cache fallback; not awaited (the store never fails a call). */
  private remember(tool: CompiledTool, args: Record<string, unknown>, result: ToolResult): void {
    if (tool.cacheTtlSeconds > 0) void this.cache.put(tool.name, args, result, tool.cacheTtlSeconds * 1000);
    if (tool.fallback && 'cache' in tool.fallback) void this.cache.putLastGood(tool.name, args, result);
  }
}
