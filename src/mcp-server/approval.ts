import type { CallToolResult, Server, ServerContext } from '@modelcontextprotocol/server';
import type { Caller } from '../auth/caller.js';
import { runApproved } from '../confirm/run.js';
import type { Gateway } from '../gateway.js';
import type { PendingResponse } from '../pipeline/index.js';
import { declinedResult, pendingResult, toolResult } from './results.js';
import { canElicitForm } from './server.js';
import type { McpNames } from './names.js';

/** The longest an elicitation may wait for its user; after it the confirmation stays pending for an approver. */
const MAX_WAIT_MS = 10 * 60 * 1000;

export interface ApprovalContext {
  gw: Gateway;
  server: Server;
  /** The request that made the call: the elicitation travels on its stream. */
  ctx: ServerContext;
  caller: Caller;
  /** The config allows MCP-client approval of this tool (mcp.elicitApproval.tools). */
  mayElicit: (tool: string) => boolean;
  /** mcp.toolNames: how texts and forms name the tool. */
  names: McpNames;
  requestId: string;
  sessionTag: string;
}

/**
 * The approver of a call decided by the MCP client's user, not the agent's key. Its own id keeps
 * the audit honest (`mcp-session:<caller>`), and four-eyes, which separates two keys, is met by
 * construction: the client must show the form to its user, and only tools the operator listed
 * in mcp.elicitApproval may be approved this way.
 */
export function sessionApprover(caller: Caller): Caller {
  return { id: `mcp-session:${caller.id}`, roles: new Set(['approver']), toolPatterns: caller.toolPatterns };
}

/** The form shown to the client's user: one `approve` box. */
export function approvalForm(pending: { tool: string; summary: string }) {
  return {
    mode: 'form' as const,
    message: `Approve this call? ${pending.summary}`,
    requestedSchema: {
      type: 'object' as const,
      properties: { approve: { type: 'boolean' as const, title: 'Approve', description: `Run ${pending.tool} now with these arguments`, default: false } },
      required: ['approve'],
    },
  };
}

/**
 * Decides a pending confirmation as the client's user answered, and runs it when approved (once,
 * audited with the session as approver). Shared by both eras' approval paths.
 */
export async function decideByClient(gw: Gateway, caller: Caller, pending: Pick<PendingResponse, 'tool'> & { confirmationId: string }, approve: boolean, requestId: string, note: string, names: McpNames): Promise<CallToolResult> {
  const approver = sessionApprover(caller);
  const leave = gw.inFlight.enter(); // waiting for the user was not work in flight; deciding and running is
  try {
    if (approve) {
      const conf = await gw.confirmations.decide(pending.confirmationId, approver, 'approved', note);
      const out = await runApproved(gw, conf, requestId);
      return toolResult(out.result, out.policy.findings);
    }
    const conf = await gw.confirmations.decide(pending.confirmationId, approver, 'rejected', note);
    await gw.calls.update(conf.callId, { status: 'rejected', approver: approver.id });
    return declinedResult({ tool: names.shown(pending.tool), confirmationId: conf.id });
  } finally {
    leave();
  }
}

/**
 * A gated call over a 2025 session: asks the client's user through `elicitation/create` when the
 * client can show a form and the tool allows it; accept runs the call, decline or cancel rejects
 * it. Otherwise, or when no answer comes, the confirmation stays pending and the result names it.
 */
export async function settleGate(a: ApprovalContext, pending: PendingResponse): Promise<CallToolResult> {
  if (!canElicitForm(a.server) || !a.mayElicit(pending.tool)) return pendingResult(pending, a.names.shown);
  const wait = Math.min(MAX_WAIT_MS, Date.parse(pending.confirmation.expiresAt) - Date.now());
  if (!(wait > 0)) return pendingResult(pending, a.names.shown);
  let approve: boolean;
  try {
    const answer = await a.ctx.mcpReq.elicitInput(approvalForm({ tool: a.names.shown(pending.tool), summary: a.names.summary(pending.confirmation.summary, pending.tool) }), { signal: a.ctx.mcpReq.signal, timeout: wait });
    approve = answer.action === 'accept' && answer.content?.['approve'] === true;
  } catch {
    return pendingResult(pending, a.names.shown); // no answer (timeout, client error): an approver may still decide
  }
  // Shutting down: leave the decision to an approver rather than start a call the drain would cut.
  if (a.gw.draining) return pendingResult(pending, a.names.shown);
  return decideByClient(a.gw, a.caller, { tool: pending.tool, confirmationId: pending.confirmation.id }, approve, a.requestId, `decided through MCP elicitation in session ${a.sessionTag}`, a.names);
}
