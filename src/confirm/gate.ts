import type { CallRecords } from '../calls/records.js';
import { redactArgs } from '../audit/record.js';
import type { CallRequest, PendingResponse } from '../pipeline/index.js';
import type { CompiledTool } from '../tools/types.js';
import { digest } from '../util/hash.js';
import { snapshotOf, type AskerSnapshot } from './asker.js';
import type { Confirmations, Confirmation } from './service.js';
import { issuerField } from '../auth/caller.js';

export interface GateDeps {
  confirmations: Confirmations;
  calls: CallRecords;
  secrets: ReadonlySet<string>;
  /** Told of each new pending confirmation (the webhook); must not throw. */
  onPending?: (conf: Confirmation) => void;
}

const SUMMARY_ARGS_MAX = 400;

/** A token caller's snapshot (it is in no key table to look up when the call is approved). */
function withAsker(req: CallRequest): { asker?: AskerSnapshot } {
  const asker = snapshotOf(req.caller);
  return asker ? { asker } : {};
}

/** Stage: a call that needs confirmation becomes a pending confirmation bound to its exact arguments and caller. */
export function makeGate(deps: GateDeps) {
  return async (tool: CompiledTool, args: Record<string, unknown>, req: CallRequest, callId: string): Promise<PendingResponse> => {
    const argsRedacted = redactArgs(tool, args, deps.secrets);
    let shown = JSON.stringify(argsRedacted);
    if (shown.length > SUMMARY_ARGS_MAX) shown = `${shown.slice(0, SUMMARY_ARGS_MAX)}…`;
    const summary = `${req.caller.id} asks to run ${tool.name} (${tool.sideEffect}) with ${shown}${req.sessionId ? ` in session ${req.sessionId}` : ''}`;
    const conf = await deps.confirmations.open({
      callId,
      tool: tool.name,
      args,
      argsRedacted,
      argsDigest: digest(args),
      caller: req.caller.id,
      ...withAsker(req),
      sessionId: req.sessionId,
      requestId: req.requestId,
      summary,
    });
    const now = new Date().toISOString();
    await deps.calls.put({
      callId,
      tool: tool.name,
      caller: req.caller.id,
      ...issuerField(req.caller),
      sessionId: req.sessionId,
      status: 'pending_confirmation',
      confirmationId: conf.id,
      createdAt: now,
      updatedAt: now,
    });
    deps.onPending?.(conf);
    return { callId, tool: tool.name, status: 'pending_confirmation', confirmation: { id: conf.id, expiresAt: conf.expiresAt, summary } };
  };
}
