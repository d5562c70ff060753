import type { ServerResponse } from 'node:http';
import { GatewayError } from '../errors.js';
import type { ClientGone, RunningCall } from './execute.js';
import { whenClosed, type ResponseCloseListener } from '../util/response-close.js';

export function callerGone(): GatewayError {
  return new GatewayError('UNAVAILABLE', 'the caller went away; the call was cancelled');
}

/**
 * The running call of one request, for whoever may cancel it (an MCP client's
 * `notifications/cancelled`, a closed stream): attached when the call starts, detached when it
 * settles or the request is done.
 */
export class CallSlot implements ClientGone {
  private call: RunningCall | undefined;
  private done = false;

  attach(call: RunningCall): void {
    if (!this.done) this.call = call;
  }

  detach(call: RunningCall): void {
    if (this.call === call) this.call = undefined;
  }

  cancel(reason: Error): void {
    this.call?.stop(reason);
  }

  /** The request is done: nothing is cancelled from now on. */
  release(): void {
    this.done = true;
    this.call = undefined;
  }
}

/**
 * Watches an HTTP response for the client leaving before its answer and cancels the call then.
 * It listens on the response, a per-request object, not on the keep-alive socket (no listener
 * churn on a long-lived object).
 */
export class ClientWatch extends CallSlot implements ResponseCloseListener {
  constructor(res: ServerResponse) {
    super();
    whenClosed(res, this);
  }

  responseClosed(res: ServerResponse): void {
    if (!res.writableFinished) this.cancel(callerGone());
  }
}
