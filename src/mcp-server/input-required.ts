import { inputRequired, inputResponse, ProtocolError, ProtocolErrorCode, type CallToolResult, type InputRequiredResult, type ServerContext, type ClientCapabilities } from '@modelcontextprotocol/server';
import type { Caller } from '../auth/caller.js';
import { isGatewayError } from '../errors.js';
import type { PendingResponse } from '../pipeline/index.js';
import { approvalForm, decideByClient } from './approval.js';
import { errorResult, pendingResult } from './results.js';
import type { McpServerDeps } from './server.js';
import { madeBy, sessionKey } from '../auth/caller.js';

/** What a 2026-07-28 tools/call needs to turn a pending confirmation into an input request. */
export interface ModernGate {
  deps: McpServerDeps;
  caller: Caller;
  requestId: string;
  /** The request's envelope declared the elicitation (form) capability. */
  canAsk: boolean;
  /** The client capabilities its envelope declares (for the MCP servers' requests relayed to it). */
  capabilities?: (() => ClientCapabilities | undefined) | undefined;
}

/** The input request's key, and the requestState prefix (versioned, so a later format can tell old state apart). */
const KEY = 'approve';
const STATE = 'tg1.';

const invalidState = () => new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid or expired requestState', { reason: 'invalid_request_state' });

/** Marks a confirmation as asked of this caller's MCP client (shared state: any replica may take the answer). */
const askedKey = (confirmationId: string) => `toolgate:mcp:asked:${confirmationId}`;

/**
 * A gated call in 2026-07-28: when the client can show a form and the tool may be approved by the
 * client's user, the result is `input_required` with one form, and its `requestState` is the
 * confirmation id. That state holds no authority by itself: the gateway records (in the state
 * store, shared through Redis across replicas) that it asked this caller about this confirmation,
 * and on the retry checks that record and the confirmations store (still pending, this caller's
 * own, of this tool), so a client can neither approve another key's call nor one it was never
 * asked about (a REST call's, or one whose result only named the confirmation). Otherwise the
 * result names the pending confirmation, as in 2025.
 */
export async function askModern(g: ModernGate, pending: PendingResponse): Promise<CallToolResult | InputRequiredResult> {
  if (!g.canAsk || !g.deps.mayElicit(pending.tool)) return pendingResult(pending, g.deps.names.shown);
  const ttl = Date.parse(pending.confirmation.expiresAt) - Date.now();
  if (!(ttl > 0)) return pendingResult(pending, g.deps.names.shown);
  await g.deps.gw.state.set(askedKey(pending.confirmation.id), sessionKey(g.caller), ttl);
  return ask(pending.confirmation.id, g.deps.names.shown(pending.tool), g.deps.names.summary(pending.confirmation.summary, pending.tool));
}

function ask(confirmationId: string, tool: string, summary: string): InputRequiredResult {
  const { message, requestedSchema } = approvalForm({ tool, summary });
  return inputRequired({ inputRequests: { [KEY]: inputRequired.elicit({ mode: 'form', message, requestedSchema }) }, requestState: `${STATE}${confirmationId}` });
}

/**
 * The retry of a call that answered `input_required`: undefined when the request carries no
 * requestState (a first call). State that does not name a confirmation this caller was asked to
 * decide here is refused with -32602, the same answer for unknown, another key's, or forged.
 */
export async function resumeModern(g: ModernGate, ctx: ServerContext, tool: string): Promise<CallToolResult | InputRequiredResult | undefined> {
  const state = ctx.mcpReq.requestState<unknown>();
  if (state === undefined) return undefined;
  if (typeof state !== 'string' || !state.startsWith(STATE)) throw invalidState();
  const { gw, mayElicit } = g.deps;
  const id = state.slice(STATE.length);
  // Asked of this caller, by this gateway, and the client can still answer a form.
  if (!g.canAsk || id === '' || (await gw.state.get(askedKey(id))) !== sessionKey(g.caller)) throw invalidState();
  const conf = await gw.confirmations.get(id);
  // The retry may name the tool by either form (mcp.toolNames); the confirmation holds the canonical one.
  const named = gw.registry.get(tool)?.name ?? tool;
  const shown = g.deps.names.shown;
  if (!conf || !madeBy({ caller: conf.caller, issuer: conf.asker?.identity.issuer, subject: conf.asker?.identity.subject }, g.caller) || conf.tool !== named || !mayElicit(conf.tool) || !gw.confirmations.inScope(g.caller, conf)) throw invalidState();
  if (conf.status === 'expired') throw invalidState();
  if (conf.status !== 'pending') {
    return { content: [{ type: 'text', text: `This call of '${shown(conf.tool)}' was already decided (confirmation ${conf.id}: ${conf.status}${conf.approver ? ` by ${conf.approver}` : ''}).` }], isError: conf.status === 'rejected' };
  }
  const answer = inputResponse(ctx.mcpReq.inputResponses, KEY);
  if (answer.kind === 'missing') return ask(conf.id, shown(conf.tool), g.deps.names.summary(conf.summary, conf.tool)); // asked again: nothing was answered
  // An accepted form whose box is not a boolean does not match the form: asked again, as the SDK
  // advises (a 2025 client's such answer is refused by the SDK and leaves the call pending too).
  if (answer.kind === 'elicit' && answer.action === 'accept' && typeof answer.content?.[KEY] !== 'boolean') return ask(conf.id, shown(conf.tool), g.deps.names.summary(conf.summary, conf.tool));
  const approve = answer.kind === 'elicit' && answer.action === 'accept' && answer.content?.[KEY] === true;
  if (gw.draining && approve) return pendingResult({ status: 'pending_confirmation', tool: conf.tool, callId: conf.callId, confirmation: { id: conf.id, expiresAt: conf.expiresAt, summary: conf.summary } }, shown);
  try {
    return await decideByClient(gw, g.caller, { tool: conf.tool, confirmationId: conf.id }, approve, g.requestId, 'decided through an MCP input request (2026-07-28)', g.deps.names);
  } catch (e) {
    if (isGatewayError(e)) return errorResult(e, { registry: gw.registry, caller: g.caller, names: g.deps.names }, tool);
    throw e;
  }
}
