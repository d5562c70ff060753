import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Caller } from '../auth/caller.js';
import { runApproved } from '../confirm/run.js';
import type { Gateway } from '../gateway.js';
import type { PendingResponse } from '../pipeline/index.js';
import { declinedResult, pendingResult, toolResult } from './results.js';

/** The longest an elicitation may wait for its user; after it the confirmation stays pending for an approver. */
const MAX_WAIT_MS = 10 * 60 * 1000;

export interface ApprovalContext {
  gw: Gateway;
  server: Server;
  caller: Caller;
  /** The config allows MCP-client approval of this tool (mcp.elicitApproval.tools). */
  mayElicit: (tool: string) => boolean;
  /** The MCP request that made the call: the elicitation travels on its stream. */
  relatedRequestId: string | number;
  signal: AbortSignal;
  requestId: string;
  sessionTag: string;
}

/**
 * The approver of a call decided through elicitation: the person at the MCP client, not the
 * agent's key. Its own id keeps the audit honest (`mcp-session:<caller>`), and four-eyes, which
 * separates two keys, is met by construction: the client must show the form to its user, and
 * only tools the operator listed in mcp.elicitApproval may be approved this way.
 */
function sessionApprover(caller: Caller): Caller {
  return { id: `mcp-session:${caller.id}`, roles: new Set(['approver']), toolPatterns: caller.toolPatterns };
}

/**
 * A gated call over MCP: asks the client's user through `elicitation/create` when the client can
 * show a form and the tool allows it; accept runs the call (once, audited with the session as
 * approver), decline or cancel rejects it. Otherwise, or when no answer comes, the confirmation
 * stays pending and the result names it.
 */
export async function settleGate(ctx: ApprovalContext, pending: PendingResponse): Promise<CallToolResult> {
  const canAsk = ctx.server.getClientCapabilities()?.elicitation?.form !== undefined;
  if (!canAsk || !ctx.mayElicit(pending.tool)) return pendingResult(pending);
  const wait = Math.min(MAX_WAIT_MS, Date.parse(pending.confirmation.expiresAt) - Date.now());
  if (!(wait > 0)) return pendingResult(pending);
  let approve: boolean;
  try {
    const answer = await ctx.server.elicitInput(
      {
        mode: 'form',
        message: `Approve this call? ${pending.confirmation.summary}`,
        requestedSchema: {
          type: 'object',
          properties: { approve: { type: 'boolean', title: 'Approve', description: `Run ${pending.tool} now with these arguments`, default: false } },
          required: ['approve'],
        },
      },
      { relatedRequestId: ctx.relatedRequestId, signal: ctx.signal, timeout: wait },
    );
    approve = answer.action === 'accept' && answer.content?.['approve'] === true;
  } catch {
    return pendingResult(pending); // no answer (timeout, client error): an approver may still decide
  }
  const { gw } = ctx;
  // Shutting down: leave the decision to an approver rather than start a call the drain would cut.
  if (gw.draining) return pendingResult(pending);
  const approver = sessionApprover(ctx.caller);
  const note = `decided through MCP elicitation in session ${ctx.sessionTag}`;
  const leave = gw.inFlight.enter(); // waiting for the user was not work in flight; deciding and running is
  try {
    if (approve) {
      const conf = await gw.confirmations.decide(pending.confirmation.id, approver, 'approved', note);
      const out = await runApproved(gw, conf, ctx.requestId);
      return toolResult(out.result);
    }
    const conf = await gw.confirmations.decide(pending.confirmation.id, approver, 'rejected', note);
    await gw.calls.update(conf.callId, { status: 'rejected', approver: approver.id });
    return declinedResult(pending);
  } finally {
    leave();
  }
}
