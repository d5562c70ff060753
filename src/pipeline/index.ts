import { GatewayError, isGatewayError } from '../errors.js';
import type { Caller } from '../auth/caller.js';
import type { ToolResult } from '../adapters/types.js';
import { auditRecord, redactArgs } from '../audit/record.js';
import { scrubSecrets } from '../audit/redact.js';
import type { AuditSink } from '../audit/types.js';
import type { Config } from '../config/schema.js';
import type { HealthBook } from '../resilience/health.js';
import { Bulkhead } from '../resilience/bulkhead.js';
import type { Rng } from '../routing/select.js';
import type { StateStore } from '../state/types.js';
import type { Registry } from '../tools/registry.js';
import type { CompiledTool } from '../tools/types.js';
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
  /** Aborts when the client goes away. */
  signal?: AbortSignal | undefined;
}

export interface CallResponse {
  callId: string;
  tool: string;
  status: 'ok';
  backend: string;
  attempts: number;
  durationMs: number;
  responseHash: string;
  fallback: null | { kind: string; reason: string; tool?: string };
  policy: PolicyTrail;
  result: ToolResult;
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
  /** The gate stage: opens a confirmation for a call that needs one. */
  gate: (tool: CompiledTool, args: Record<string, unknown>, req: CallRequest, callId: string) => Promise<PendingResponse>;
  /** Told when a stage degrades instead of failing (loop guard, rate limits with the shared store down). */
  onWarning?: (msg: string, err?: unknown) => void;
  /** Told of every finished call (metrics). */
  onCallEnd?: (e: { tool: string; backend: string; outcome: 'ok' | 'error' | 'fallback'; errorCode?: string; seconds: number }) => void;
}

type Outcome = 'ok' | 'error' | 'fallback' | 'pending_confirmation';
interface Finish {
  outcome: Outcome;
  backend: string | undefined;
  durationMs: number;
  errorCode?: string;
  responseHash?: string;
  confirmationId?: string;
}

/**
 * The composer: resolve → validate → idempotency → loop guard → bulkhead → execute (routing,
 * breakers, retries) → fallback → normalize → audit. Every call, refused or run, leaves exactly
 * one audit record; every failure is a GatewayError.
 */
export class CallPipeline {
  private readonly bulkhead = new Bulkhead();
  private readonly idempotency: Idempotency<CallResponse | PendingResponse>;

  constructor(private readonly deps: PipelineDeps) {
    this.idempotency = new Idempotency(deps.state, deps.limits.idempotencyTtlSeconds * 1000);
  }

  async call(req: CallRequest, fallbackDepth = 0): Promise<CallResponse | PendingResponse> {
    const started = performance.now();
    const callId = req.approval?.callId ?? newId('c');
    const trail = newTrail();
    let tool: CompiledTool | undefined;
    let backend: string | undefined;
    let claimed = false;
    const caller = req.caller.id;
    try {
      tool = resolveTool(this.deps.registry(), req.toolName, req.caller);
      const args = validateArguments(tool, req.args);
      checkGuards(tool, args);
      // An approved call was counted when it was asked for; a fallback counts as its first call.
      if (!req.approval && fallbackDepth === 0) await checkRateLimits(this.deps.state, { caller: this.deps.limits.rateLimit, tool: tool.rateLimit }, { caller, tool: tool.name }, this.deps.onWarning);
      const argsDigest = digest(args);
      const idemDigest = digest({ tool: tool.name, args });
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
          this.finish(req, tool, callId, trail, { outcome: 'pending_confirmation', backend: undefined, durationMs, confirmationId: pending.confirmation.id }, started);
          return pending;
        }
      }
      const { result, usedBackend, fallback } = await this.run(tool, args, req, trail, fallbackDepth);
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
      };
      if (claimed) await this.idempotency.complete(caller, req.idempotencyKey as string, idemDigest, response);
      this.finish(req, tool, callId, trail, { outcome: fallback ? 'fallback' : 'ok', backend, durationMs, responseHash: response.responseHash }, started);
      return response;
    } catch (e) {
      if (claimed) await this.idempotency.abandon(caller, req.idempotencyKey as string).catch(() => undefined);
      const err = isGatewayError(e) ? e : new GatewayError('INTERNAL', 'the call failed inside the gateway', { cause: e });
      const durationMs = Math.round(performance.now() - started);
      this.finish(req, tool, callId, trail, { outcome: 'error', backend: backend ?? trail.tried.at(-1), durationMs, errorCode: err.code }, started);
      throw this.scrub(err);
    }
  }

  private replay(req: CallRequest, tool: CompiledTool, prior: CallResponse | PendingResponse, started: number): CallResponse | PendingResponse {
    if (prior.status === 'pending_confirmation') {
      this.finish(req, tool, prior.callId, { ...newTrail(), replayed: true }, { outcome: 'pending_confirmation', backend: undefined, durationMs: 0, confirmationId: prior.confirmation.id }, started);
      return prior;
    }
    const policy = { ...prior.policy, replayed: true };
    this.finish(req, tool, prior.callId, policy, { outcome: 'ok', backend: prior.backend, durationMs: 0, responseHash: prior.responseHash }, started);
    return { ...prior, policy };
  }

  /** Bulkhead, execute, and on a backend failure the tool's fallback. */
  private async run(tool: CompiledTool, args: Record<string, unknown>, req: CallRequest, trail: PolicyTrail, depth: number) {
    const release = this.bulkhead.acquire(tool);
    try {
      const run = await execute(
        tool,
        args,
        { ...this.deps, requestId: req.requestId, signal: req.signal, route: { caller: req.caller.id, headers: req.headers ?? {} } },
        trail,
      );
      return { result: normalizeResult(tool, run.payload), usedBackend: run.backend.id, fallback: undefined };
    } catch (e) {
      const plan = isGatewayError(e) && depth === 0 ? fallbackFor(tool, e) : undefined;
      if (!plan || !isGatewayError(e)) throw e;
      if (plan.kind === 'tool') {
        const other = await this.call({ ...req, toolName: plan.tool, args, idempotencyKey: undefined }, depth + 1);
        if (other.status !== 'ok') throw e; // a gated fallback cannot answer now
        trail.fallback = { kind: 'tool', reason: e.code, tool: other.tool };
        return { result: other.result, usedBackend: `${other.tool}/${other.backend}`, fallback: trail.fallback };
      }
      trail.fallback = { kind: plan.kind, reason: e.code };
      return { result: plan.result, usedBackend: 'fallback', fallback: trail.fallback };
    } finally {
      release();
    }
  }

  private finish(
    req: CallRequest,
    tool: CompiledTool | undefined,
    callId: string,
    trail: PolicyTrail,
    out: Finish,
    started: number,
  ): void {
    const toolName = tool?.name ?? req.toolName;
    this.deps.audit.write(
      auditRecord({
        event: 'call',
        requestId: req.requestId,
        callId,
        sessionId: req.sessionId,
        caller: req.caller.id,
        tool: toolName,
        backend: out.backend,
        attempts: trail.attempts,
        args: redactArgs(tool, req.args, this.deps.secrets),
        argsDigest: digest(req.args ?? null),
        outcome: out.outcome,
        errorCode: out.errorCode,
        durationMs: out.durationMs,
        responseHash: out.responseHash,
        policy: { ...trail },
        ...(out.confirmationId ?? req.approval ? { confirmationId: out.confirmationId ?? req.approval?.confirmationId } : {}),
        ...(req.approval ? { approver: req.approval.approver } : {}),
      }),
    );
    if (tool && out.outcome !== 'pending_confirmation') {
      this.deps.onCallEnd?.({
        tool: tool.name,
        backend: out.backend ?? 'none',
        outcome: out.outcome,
        ...(out.errorCode ? { errorCode: out.errorCode } : {}),
        seconds: (performance.now() - started) / 1000,
      });
    }
  }

  /** Upstream error text may echo a secret back: never hand it to the client. */
  private scrub(err: GatewayError): GatewayError {
    if (this.deps.secrets.size === 0) return err;
    return new GatewayError(err.code, scrubSecrets(err.message, this.deps.secrets), {
      details: scrubSecrets(err.details, this.deps.secrets),
      modelMessage: scrubSecrets(err.modelMessage, this.deps.secrets), // an MCP tool error puts upstream text here
      ...(err.retryAfterSeconds !== undefined ? { retryAfterSeconds: err.retryAfterSeconds } : {}),
      ...(err.upstream ? { upstream: err.upstream } : {}),
    });
  }
}
