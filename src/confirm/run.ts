import { GatewayError, isGatewayError } from '../errors.js';
import type { KeyTable } from '../auth/keys.js';
import { callerFromSnapshot } from './asker.js';
import type { CallRecords } from '../calls/records.js';
import type { CallPipeline, CallResponse } from '../pipeline/index.js';
import type { Confirmation } from './service.js';

/**
 * Runs an approved call exactly as it was asked: same tool, same arguments, as the caller that
 * asked (an API key must still exist; a token caller runs as its snapshot, without its token),
 * under the same callId; its outcome goes to the call record.
 */
export async function runApproved(
  deps: { pipeline: CallPipeline; keys: KeyTable; calls: CallRecords },
  conf: Confirmation,
  requestId: string,
): Promise<CallResponse & { confirmationId: string; approver: string }> {
  const approver = conf.approver as string;
  // A token caller runs as it asked (its snapshot); an API-key caller as its key is now (a removed key refuses).
  const caller = conf.asker ? callerFromSnapshot(conf.asker) : deps.keys.callerById(conf.caller);
  try {
    if (!caller) throw new GatewayError('FORBIDDEN', `the caller '${conf.caller}' that asked for this call no longer exists`);
    await deps.calls.update(conf.callId, { status: 'running', approver });
    const out = await deps.pipeline.call({
      toolName: conf.tool,
      args: conf.args,
      sessionId: conf.sessionId,
      caller,
      requestId,
      approval: { confirmationId: conf.id, approver, callId: conf.callId },
    });
    if (out.status !== 'ok') throw new GatewayError('INTERNAL', 'an approved call asked for confirmation again');
    const response = { ...out, confirmationId: conf.id, approver };
    await deps.calls.update(conf.callId, { status: 'ok', response });
    return response;
  } catch (e) {
    const err = isGatewayError(e) ? e : new GatewayError('INTERNAL', 'the approved call failed inside the gateway', { cause: e });
    await deps.calls.update(conf.callId, { status: 'error', error: err.toBody().error });
    throw err;
  }
}
