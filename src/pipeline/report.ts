import { GatewayError } from '../errors.js';
import { redactArgs } from '../audit/record.js';
import type { AuditRecord } from '../audit/types.js';
import { newId } from '../util/ids.js';
import { scrubSecrets } from '../audit/redact.js';
import type { CompiledTool } from '../tools/types.js';
import { digest } from '../util/hash.js';
import type { PolicyTrail } from './execute.js';
import type { ResultFinding } from '../guards/result/stage.js';
import type { CallRequest, PipelineDeps } from './index.js';

/** The last stage: every call, refused or run, leaves one audit record and (once resolved) one metric observation. */

type Outcome = 'ok' | 'error' | 'fallback' | 'pending_confirmation' | 'accepted';
export interface Finish {
  outcome: Outcome;
  backend: string | undefined;
  durationMs: number;
  errorCode?: string;
  responseHash?: string;
  confirmationId?: string;
  argsDigest?: string | undefined;
  /** What the result guards found (never the matched text). */
  findings?: readonly ResultFinding[] | undefined;
}

export function reportCall(
  deps: Pick<PipelineDeps, 'audit' | 'secrets' | 'onCallEnd' | 'onResultFindings'>,
  req: CallRequest,
  tool: CompiledTool | undefined,
  callId: string,
  trail: PolicyTrail,
  out: Finish,
  started: number,
): void {
  const toolName = tool?.name ?? req.toolName;
  // One object literal in a fixed key order (the same JSON as auditRecord's spread, built without
  // the spread: this runs for every call).
  const record: AuditRecord = {
    id: newId('a'),
    ts: new Date().toISOString(),
    event: 'call',
    requestId: req.requestId,
    callId,
    sessionId: req.sessionId,
    caller: req.caller.id,
    tool: toolName,
    backend: out.backend,
    attempts: trail.attempts,
    args: redactArgs(tool, req.args, deps.secrets),
    argsDigest: out.argsDigest ?? digest(req.args ?? null),
    outcome: out.outcome,
    errorCode: out.errorCode,
    durationMs: out.durationMs,
    responseHash: out.responseHash,
    policy: { ...trail },
  };
  const who = req.caller.identity;
  if (who) {
    record.subject = who.subject;
    if (who.clientId !== undefined) record.clientId = who.clientId;
    record.issuer = who.issuer;
  }
  const confirmationId = out.confirmationId ?? req.approval?.confirmationId;
  if (confirmationId !== undefined) record.confirmationId = confirmationId;
  if (req.approval) record.approver = req.approval.approver;
  if (out.findings && out.findings.length > 0) {
    record.findings = out.findings;
    if (tool) deps.onResultFindings?.(tool.name, out.findings);
  }
  deps.audit.write(record);
  if (tool && out.outcome !== 'pending_confirmation' && out.outcome !== 'accepted') {
    deps.onCallEnd?.({
      tool: tool.name,
      backend: out.backend ?? 'none',
      outcome: out.outcome,
      ...(out.errorCode ? { errorCode: out.errorCode } : {}),
      seconds: (performance.now() - started) / 1000,
    });
  }
}

/** Upstream error text may echo a secret back: never hand it to the client. */
export function scrubError(err: GatewayError, secrets: ReadonlySet<string>): GatewayError {
  if (secrets.size === 0) return err;
  return new GatewayError(err.code, scrubSecrets(err.message, secrets), {
    details: scrubSecrets(err.details, secrets),
    modelMessage: scrubSecrets(err.modelMessage, secrets), // an MCP tool error puts upstream text here
    ...(err.retryAfterSeconds !== undefined ? { retryAfterSeconds: err.retryAfterSeconds } : {}),
    ...(err.upstream ? { upstream: err.upstream } : {}),
  });
}
