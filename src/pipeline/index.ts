import { GatewayError, isGatewayError } from '../errors.js';
import { callerKey, issuerField, sessionKey, type Caller } from '../auth/caller.js';
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
import { digest, responseDigest } from '../util/hash.js';
import { newId } from '../util/ids.js';
import { execute, newTrail, type Adapters, type ClientGone, type PolicyTrail } from './execute.js';
import { fallbackFor } from './fallback.js';
import { Idempotency } from './idempotency.js';
import { admit } from './admit.js';
import { capResultInfo, normalizeResult } from './normalize.js';
import { secretMatcher } from '../audit/secrets.js';
import { resolveTool } from './resolve.js';
import { validateArguments } from './validate.js';
import { reportCall, scrubError } from './report.js';
import { applyGuards } from '../guards/index.js';
import { guardResult, type ResultFinding } from '../guards/result/stage.js';
import { guardErrorText, guardSideText } from '../guards/result/side-text.js';
import { needsConfirmation } from '../confirm/rule.js';
import type { Context } from '@opentelemetry/api';
import type { Tracing } from '../tracing/index.js';
import type { BackgroundCalls } from '../calls/background.js';
import type { ResultPages } from '../calls/result-pages.js';
import type { ClientChannel } from '../mcp/server-requests.js';

type CallSpan = ReturnType<Tracing['startCall']>;

/** Cached results are guarded ones: their key carries the guards in force, so a reload that changes them starts afresh. */
const cacheName = (tool: CompiledTool) => `${tool.name}#${tool.resultGuards.fingerprint}`;

const EMPTY_HEADERS: Readonly<Record<string, string | string[] | undefined>> = Object.freeze({});

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
  /** The HTTP route's client-gone hook (cheaper than a signal): given the call's cancel, returns its release. */
  onClientGone?: ClientGone | undefined;
  /** `async` (`Prefer: respond-async`) runs the call in the background; `sync` never does; unset: the tool's `async`. */
  respond?: 'sync' | 'async' | undefined;
  /** The span a fallback tool's call runs under (set by the pipeline; otherwise `traceparent` in headers). */
  traceContext?: Context | undefined;
  /** The caller's MCP client (toolgate's /mcp): an MCP server's sampling, elicitation and roots requests go to it. */
  clientChannel?: ClientChannel | undefined;
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
  /** The result was over `result.maxBytes`: `result` is its first part, the rest pages from `href`. */
  more?: MoreResult;
}

export interface MoreResult {
  totalBytes: number;
  shownBytes: number;
  href: string;
}

/** A long-running call (202): it runs in the background; GET /v1/calls/{callId} tells its outcome. */
export interface AcceptedResponse {
  callId: string;
  tool: string;
  status: 'running';
}

export type CallOutcome = CallResponse | PendingResponse | AcceptedResponse;

/** One call's state on its way through the stages (shared with its background part). */
interface RunState {
  readonly started: number;
  readonly callId: string;
  readonly trail: PolicyTrail;
  readonly span: CallSpan | undefined;
  tool: CompiledTool | undefined;
  backend: string | undefined;
  argsDigest: string | undefined;
  idem: { key: string; digest: string } | undefined;
  /** What the result guards found (the audit record's `findings`), refused calls' included. */
  readonly findings: ResultFinding[];
}

interface RunOutput {
  result: ToolResult;
  usedBackend: string;
  fallback: PolicyTrail['fallback'] | undefined;
  /** The uncapped result, when the cap cut it. */
  full?: ToolResult;
  shownBytes?: number;
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
  /** Told of a call in a session that ran (not refused, not a fallback's inner call, not an approval): prefilter learning. */
  onSessionCall?: (req: CallRequest & { sessionId: string }, tool: CompiledTool) => void;
  /** Told of a call's result-guard findings (the findings metric). */
  onResultFindings?: (tool: string, findings: readonly ResultFinding[]) => void;
  /** Runs long-running calls in the background (absent: every call answers synchronously). */
  background?: BackgroundCalls;
  /** Keeps large results' full text for paging. */
  pages?: ResultPages;
  /** OpenTelemetry spans of calls and attempts; undefined when tracing is off. */
  tracing?: Tracing | undefined;
}


/**
 * The composer: resolve → validate → idempotency → loop guard → bulkhead → execute (routing,
 * breakers, retries) → fallback → normalize → audit. Every call, refused or run, leaves exactly
 * one audit record; every failure is a GatewayError.
 */
export class CallPipeline {
  private readonly bulkhead = new Bulkhead();
  private readonly idempotency: Idempotency<CallOutcome>;
  private readonly cache: ResultCache;

  private readonly onGuardError = (e: unknown) => this.deps.onWarning?.('a result guard failed on a result; the result was withheld (RESULT_REFUSED)', e);

  constructor(private readonly deps: PipelineDeps) {
    this.cache = new ResultCache(deps.state, { ...(deps.now ? { now: deps.now } : {}), ...(deps.onWarning ? { onWarning: deps.onWarning } : {}) });
    this.idempotency = new Idempotency(deps.state, deps.limits.idempotencyTtlSeconds * 1000);
  }

  async call(req: CallRequest, fallbackDepth = 0): Promise<CallOutcome> {
    const started = performance.now();
    const callId = req.approval?.callId ?? newId('c');
    const span = this.deps.tracing?.startCall(req, callId);
    const run: RunState = { started, callId, trail: newTrail(), tool: undefined, backend: undefined, argsDigest: undefined, idem: undefined, span, findings: [] };
    const caller = callerKey(req.caller); // rate limits, loop guard: per issuer and id
    const owner = sessionKey(req.caller); // idempotency: a stored answer is a person's (also under claims.id: client_id)
    let inBackground = false;
    try {
      const tool = (run.tool = resolveTool(this.deps.registry(), req.toolName, req.caller));
      const checked = validateArguments(tool, req.args, this.deps.limits.maxArgumentDepth);
      const args = tool.guards.length === 0 ? checked : await applyGuards(tool, checked);
      const argsDigest = (run.argsDigest = digest(args));
      if (!req.approval) {
        // An approved call was counted when it was asked for; a fallback counts as its first call.
        const limits = this.deps.limits;
        const rate = fallbackDepth === 0 && (limits.rateLimit || tool.rateLimit) ? { caller: limits.rateLimit, tool: tool.rateLimit } : undefined;
        const idem = req.idempotencyKey ? { owner, key: req.idempotencyKey, digest: digest({ tool: tool.name, args }) } : undefined;
        const loop = req.sessionId ? { sessionId: req.sessionId, argsDigest, loopRepeats: limits.loopRepeats, loopWindowSeconds: limits.loopWindowSeconds } : undefined;
        if (rate || idem || loop) {
          const prior = await admit(this.deps.state, this.idempotency, { caller, tool: tool.name, rate, idem, loop }, this.deps.onWarning);
          if (prior) {
            span?.settled('replayed');
            return this.replay(req, tool, prior.replay, started);
          }
          if (idem) run.idem = { key: idem.key, digest: idem.digest };
        }
        if (await needsConfirmation(tool.confirm, args)) {
          const pending = await this.deps.gate(tool, args, req, callId);
          if (run.idem) await this.idempotency.complete(owner, run.idem.key, run.idem.digest, pending);
          const durationMs = Math.round(performance.now() - started);
          reportCall(this.deps, req, tool, callId, run.trail, { outcome: 'pending_confirmation', backend: undefined, durationMs, confirmationId: pending.confirmation.id, argsDigest }, started);
          span?.settled('pending_confirmation');
          return pending;
        }
      }
      if (this.deps.background && fallbackDepth === 0 && !req.approval && (req.respond === 'async' || (req.respond !== 'sync' && tool.async))) {
        const accepted = await this.accept(this.deps.background, tool, args, req, run);
        inBackground = true;
        return accepted;
      }
      return await this.finish(tool, args, req, run, fallbackDepth);
    } catch (e) {
      throw await this.failed(req, run, e);
    } finally {
      if (!inBackground) span?.end(run.trail, run.backend);
    }
  }

  /**
   * A long-running call: recorded as running, answered 202 at once, finished in the background
   * under the same deadline, breakers and audit; its outcome goes to the call record. Its
   * Idempotency-Key replays the 202 (the record tells the outcome).
   */
  private async accept(background: BackgroundCalls, tool: CompiledTool, args: Record<string, unknown>, req: CallRequest, run: RunState): Promise<AcceptedResponse> {
    const accepted: AcceptedResponse = { callId: run.callId, tool: tool.name, status: 'running' };
    const idem = run.idem;
    run.idem = undefined;
    try {
      await background.start({ callId: run.callId, tool: tool.name, caller: req.caller.id, ...issuerField(req.caller), sessionId: req.sessionId }, async (signal, onProgress) => {
        const bg: CallRequest = { ...req, signal, onProgress, onClientGone: undefined, clientChannel: undefined }; // the client may leave: the call goes on (and cannot be asked)
        try {
          return await this.finish(tool, args, bg, run, 0);
        } catch (e) {
          throw await this.failed(bg, run, e);
        } finally {
          run.span?.end(run.trail, run.backend);
        }
      });
    } catch (e) {
      run.idem = idem;
      throw e;
    }
    if (idem) await this.idempotency.complete(sessionKey(req.caller), idem.key, idem.digest, accepted);
    reportCall(this.deps, req, tool, run.callId, run.trail, { outcome: 'accepted', backend: undefined, durationMs: Math.round(performance.now() - run.started), argsDigest: run.argsDigest }, run.started);
    return accepted;
  }

  /** Cache or backends (with the fallback), the response, its idempotency entry and its report. */
  private async finish(tool: CompiledTool, args: Record<string, unknown>, req: CallRequest, run: RunState, depth: number): Promise<CallResponse> {
    const { trail, callId } = run;
    const hit = tool.cacheTtlSeconds > 0 ? await this.fromCache(tool, args, trail) : undefined;
    const out = hit ?? (await this.run(tool, args, run.span ? { ...req, traceContext: run.span.context } : req, trail, depth, run));
    const flagged = run.findings.filter((f) => f.action === 'flag');
    if (flagged.length > 0) trail.findings = flagged.map((f) => ({ kind: f.kind, action: f.action, count: f.count, ...(f.note !== undefined ? { note: f.note } : {}) }));
    run.backend = out.usedBackend;
    const more = out.full ? await this.keepFull(tool, req, callId, out.full, out.shownBytes ?? 0) : undefined;
    const durationMs = Math.round(performance.now() - run.started);
    const response: CallResponse = {
      callId,
      tool: tool.name,
      status: 'ok',
      backend: out.usedBackend,
      attempts: trail.attempts,
      durationMs,
      responseHash: responseDigest(out.result),
      fallback: out.fallback ?? null,
      policy: trail,
      result: out.result,
    };
    if (trail.cached) response.cached = true;
    if (more) response.more = more;
    if (run.idem) await this.idempotency.complete(sessionKey(req.caller), run.idem.key, run.idem.digest, response);
    reportCall(this.deps, req, tool, callId, trail, { outcome: out.fallback ? 'fallback' : 'ok', backend: out.usedBackend, durationMs, responseHash: response.responseHash, argsDigest: run.argsDigest, findings: run.findings }, run.started);
    if (req.sessionId !== undefined && depth === 0 && !req.approval) this.deps.onSessionCall?.(req as CallRequest & { sessionId: string }, tool);
    return response;
  }

  /** A failed call: its idempotency key freed, its report written; the error as the client may see it. */
  private async failed(req: CallRequest, run: RunState, e: unknown): Promise<GatewayError> {
    if (run.idem) await this.idempotency.abandon(sessionKey(req.caller), run.idem.key).catch(() => undefined);
    let err = isGatewayError(e) ? e : new GatewayError('INTERNAL', 'the call failed inside the gateway', { cause: e });
    // An upstream's error text (its body, an MCP tool error) reaches the model too: the tool's result guards read it.
    if (run.tool && (err.upstream !== undefined || err.code === 'UPSTREAM_ERROR')) err = guardErrorText(run.tool.resultGuards, err, { secrets: this.deps.secrets }, run.findings);
    const durationMs = Math.round(performance.now() - run.started);
    reportCall(this.deps, req, run.tool, run.callId, run.trail, { outcome: 'error', backend: run.backend ?? run.trail.tried.at(-1), durationMs, errorCode: err.code, argsDigest: run.argsDigest, findings: run.findings }, run.started);
    run.span?.fail(err);
    return scrubError(err, this.deps.secrets);
  }

  /** A result over `result.maxBytes`: its whole text kept for paging; the response links to the rest. */
  private async keepFull(tool: CompiledTool, req: CallRequest, callId: string, full: ToolResult, shownBytes: number): Promise<MoreResult | undefined> {
    if (!this.deps.pages) return undefined;
    try {
      const totalBytes = await this.deps.pages.keep(callId, tool.name, req.caller, full);
      return { totalBytes, shownBytes, href: `/v1/calls/${callId}/result?offset=${shownBytes}` };
    } catch (e) {
      this.deps.onWarning?.('a large result could not be kept for paging; the response carries its first part only', e);
      return undefined;
    }
  }

  private replay(req: CallRequest, tool: CompiledTool, prior: CallOutcome, started: number): CallOutcome {
    if (prior.status === 'running') {
      reportCall(this.deps, req, tool, prior.callId, { ...newTrail(), replayed: true }, { outcome: 'accepted', backend: undefined, durationMs: 0 }, started);
      return prior;
    }
    if (prior.status === 'pending_confirmation') {
      reportCall(this.deps, req, tool, prior.callId, { ...newTrail(), replayed: true }, { outcome: 'pending_confirmation', backend: undefined, durationMs: 0, confirmationId: prior.confirmation.id }, started);
      return prior;
    }
    const policy = { ...prior.policy, replayed: true };
    reportCall(this.deps, req, tool, prior.callId, policy, { outcome: 'ok', backend: prior.backend, durationMs: 0, responseHash: prior.responseHash }, started);
    return { ...prior, policy };
  }

  /** Bulkhead, execute, and on a backend failure the tool's fallback. */
  private async run(tool: CompiledTool, args: Record<string, unknown>, req: CallRequest, trail: PolicyTrail, depth: number, call: Pick<RunState, 'callId' | 'findings'>): Promise<RunOutput> {
    this.bulkhead.acquire(tool);
    const deadline = Date.now() + tool.timeoutMs; // the webhook guard gets what is left of it
    const guard = (result: ToolResult) =>
      guardResult(tool.resultGuards, result, { tool: tool.name, callId: call.callId, secrets: this.deps.secrets, deadline, signal: req.signal, onGuardError: this.onGuardError }, call.findings);
    try {
      const run = await execute(
        tool,
        args,
        {
          adapters: this.deps.adapters,
          health: this.deps.health,
          rng: this.deps.rng,
          tracing: this.deps.tracing,
          requestId: req.requestId,
          signal: req.signal,
          onClientGone: req.onClientGone,
          onProgress: req.onProgress && guardedProgress(tool, req.onProgress, this.deps.secrets, call.findings),
          traceContext: req.traceContext,
          route: { caller: req.caller.id, headers: req.headers ?? EMPTY_HEADERS },
          secrets: this.deps.secrets,
          caller: req.caller,
          clientChannel: req.clientChannel,
          sessionId: req.sessionId,
        },
        trail,
      );
      // Guarded before the cap, the cache, paging and the audit: none of them holds what a guard removed.
      const full = await guard(normalizeResult(tool, run.payload, { maxDepth: this.deps.limits.maxResultDepth, secrets: secretMatcher(this.deps.secrets) }));
      const { result, shownBytes } = capResultInfo(full, tool.result.maxBytes);
      this.remember(tool, args, result);
      return { result, usedBackend: run.backend.id, fallback: undefined, ...(result !== full ? { full, shownBytes } : { shownBytes }) };
    } catch (e) {
      const plan = isGatewayError(e) && depth === 0 ? fallbackFor(tool, e) : undefined;
      if (!plan || !isGatewayError(e)) throw e;
      if (plan.kind === 'tool') {
        const other = await this.call({ ...req, toolName: plan.tool, args, idempotencyKey: undefined }, depth + 1);
        if (other.status !== 'ok') throw e; // a gated fallback cannot answer now
        trail.fallback = { kind: 'tool', reason: e.code, tool: other.tool };
        // The other tool's guards ran on its call; this tool's run too: the model asked this one.
        return { result: await guard(other.result), usedBackend: `${other.tool}/${other.backend}`, fallback: trail.fallback };
      }
      if (plan.kind === 'cache') {
        const last = await this.cache.lastGood(cacheName(tool), args);
        if (!last) throw e; // nothing good to repeat: the failure stands
        const ageSeconds = this.cache.ageSeconds(last);
        trail.fallback = { kind: 'cache', reason: e.code, ageSeconds };
        const note = { type: 'text', text: `[from cache, ${ageSeconds} s old: the tool is failing now]` };
        return { result: { ...last.result, content: [note, ...last.result.content] }, usedBackend: 'fallback', fallback: trail.fallback };
      }
      trail.fallback = { kind: plan.kind, reason: e.code };
      return { result: plan.result, usedBackend: 'fallback', fallback: trail.fallback };
    } finally {
      this.bulkhead.release(tool);
    }
  }

  /** A fresh cached result for these arguments (for a tool that caches). */
  private async fromCache(tool: CompiledTool, args: Record<string, unknown>, trail: PolicyTrail): Promise<RunOutput | undefined> {
    const hit = await this.cache.get(cacheName(tool), args);
    if (!hit) return undefined;
    trail.cached = true;
    return { result: hit.result, usedBackend: 'cache', fallback: undefined };
  }

  /** Keeps a fresh upstream result for the cache and the cache fallback; not awaited (the store never fails a call). */
  private remember(tool: CompiledTool, args: Record<string, unknown>, result: ToolResult): void {
    if (tool.cacheTtlSeconds > 0) void this.cache.put(cacheName(tool), args, result, tool.cacheTtlSeconds * 1000);
    if (tool.fallback && 'cache' in tool.fallback) void this.cache.putLastGood(cacheName(tool), args, result);
  }
}

/** Progress notes relayed with their upstream `message` through the tool's text guards (SSE events, the call record, /mcp). */
function guardedProgress(tool: CompiledTool, relay: (p: ProgressNote) => void, secrets: ReadonlySet<string>, sink: ResultFinding[]): (p: ProgressNote) => void {
  if (tool.resultGuards.text.length === 0) return relay;
  return (p) => {
    if (p.message === undefined) return relay(p);
    const message = guardSideText(tool.resultGuards, p.message, '/progress/message', { secrets }, sink);
    relay({ progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), ...(message !== undefined ? { message } : {}) });
  };
}
