import { auditRecord } from '../audit/record.js';
import type { AuditRecord } from '../audit/types.js';
import type { ServerRequestEvent } from './server-requests.js';

/**
 * The audit record of one server request (sampling, elicitation, roots), relayed or refused:
 * `event: "server_request"`, the server as `backend`, the call's caller, tool, request and session,
 * the kind, the outcome (`ok`, `refused`, `error`, `cancelled`) with the reason and the JSON-RPC
 * code the server got, and for sampling the maxTokens sent (and asked, when capped). Never the
 * prompt, the form or the answer.
 */
export function serverRequestRecord(e: ServerRequestEvent): AuditRecord {
  return auditRecord({
    event: 'server_request',
    ...(e.requestId !== undefined ? { requestId: e.requestId } : {}),
    ...(e.sessionId !== undefined ? { sessionId: e.sessionId } : {}),
    ...(e.caller !== undefined ? { caller: e.caller } : {}),
    ...(e.tool !== undefined ? { tool: e.tool } : {}),
    backend: e.server,
    kind: e.kind,
    outcome: e.outcome,
    ...(e.reason !== undefined ? { reason: e.reason } : {}),
    ...(e.code !== undefined ? { code: e.code } : {}),
    ...(e.maxTokens !== undefined ? { maxTokens: e.maxTokens } : {}),
    ...(e.maxTokensAsked !== undefined ? { maxTokensAsked: e.maxTokensAsked } : {}),
    durationMs: e.durationMs,
  });
}
