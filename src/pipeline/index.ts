import { GatewayError, isGatewayError } from '../errors.js';
import type { Caller } from '../auth/caller.js';
import type { ToolResult } from '../adapters/types.js';
import { auditRecord, argsDigest, redactArgs } from '../audit/record.js';
import { scrubSecrets } from '../audit/redact.js';
import type { AuditSink } from '../audit/types.js';
import type { Registry } from '../tools/registry.js';
import type { CompiledTool } from '../tools/types.js';
import { digest } from '../util/hash.js';
import { newId } from '../util/ids.js';
import type { Rng } from '../routing/select.js';
import { execute, type Adapters, type PolicyTrail } from './execute.js';
import { normalizeResult } from './normalize.js';
import { resolveTool } from './resolve.js';
import { validateArguments } from './validate.js';

export interface CallRequest {
  toolName: string;
  args: unknown;
  sessionId?: string | undefined;
  caller: Caller;
  requestId: string;
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
  fallback: null | { reason: string; kind: string };
  policy: PolicyTrail;
  result: ToolResult;
}

export interface PipelineDeps {
  registry: () => Registry;
  adapters: Adapters;
  audit: AuditSink;
  secrets: ReadonlySet<string>;
  rng: Rng;
  /** Told of every finished call (metrics). */
  onCallEnd?: (e: { tool: string; backend: string; outcome: 'ok' | 'error'; errorCode?: string; seconds: number }) => void;
}

/**
 * The composer: resolve → validate → execute → normalize → audit, in that order. Every call,
 * refused or run, leaves exactly one audit record; every failure is a GatewayError.
 */
export class CallPipeline {
  constructor(private readonly deps: PipelineDeps) {}

  async call(req: CallRequest): Promise<CallResponse> {
    const started = performance.now();
    const callId = newId('c');
    const trail: PolicyTrail = { tried: [], attempts: 0, failover: false };
    let tool: CompiledTool | undefined;
    let backend: string | undefined;
    try {
      tool = resolveTool(this.deps.registry(), req.toolName, req.caller);
      const args = validateArguments(tool, req.args);
      const run = await execute(tool, args, { ...this.deps, requestId: req.requestId, signal: req.signal }, trail);
      backend = run.backend.id;
      const result = normalizeResult(tool, run.payload);
      const durationMs = Math.round(performance.now() - started);
      const response: CallResponse = {
        callId,
        tool: tool.name,
        status: 'ok',
        backend,
        attempts: trail.attempts,
        durationMs,
        responseHash: digest(result),
        fallback: null,
        policy: trail,
        result,
      };
      this.finish(req, tool, callId, trail, { outcome: 'ok', backend, durationMs, responseHash: response.responseHash }, started);
      return response;
    } catch (e) {
      const err = isGatewayError(e) ? e : new GatewayError('INTERNAL', 'the call failed inside the gateway', { cause: e });
      const durationMs = Math.round(performance.now() - started);
      this.finish(req, tool, callId, trail, { outcome: 'error', backend: backend ?? trail.tried.at(-1), durationMs, errorCode: err.code }, started);
      throw this.scrub(err);
    }
  }

  private finish(
    req: CallRequest,
    tool: CompiledTool | undefined,
    callId: string,
    trail: PolicyTrail,
    out: { outcome: 'ok' | 'error'; backend: string | undefined; durationMs: number; errorCode?: string; responseHash?: string },
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
        argsDigest: argsDigest(req.args ?? null),
        outcome: out.outcome,
        errorCode: out.errorCode,
        durationMs: out.durationMs,
        responseHash: out.responseHash,
        policy: { ...trail },
      }),
    );
    if (tool) {
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
    const details = scrubSecrets(err.details, this.deps.secrets);
    const message = scrubSecrets(err.message, this.deps.secrets);
    if (details === err.details && message === err.message) return err;
    return new GatewayError(err.code, message, {
      details,
      modelMessage: err.modelMessage,
      ...(err.retryAfterSeconds !== undefined ? { retryAfterSeconds: err.retryAfterSeconds } : {}),
      ...(err.upstream ? { upstream: err.upstream } : {}),
    });
  }
}
