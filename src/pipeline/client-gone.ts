import type { ServerResponse } from 'node:http';
import { GatewayError } from '../errors.js';
import type { ClientGoneHook } from './execute.js';

export function callerGone(): GatewayError {
  return new GatewayError('UNAVAILABLE', 'the caller went away; the call was cancelled');
}

/**
 * Watches an HTTP response for the client leaving before its answer, and hands that to the call
 * as a ClientGoneHook (cheaper on the hot path than an AbortController per request). It listens
 * on the response, a per-request object, not on the keep-alive socket: no listener churn on a
 * long-lived object. `cancel` ends the call for another reason (an MCP client's
 * notifications/cancelled).
 */
export class ClientWatch {
  private abort: ((reason: Error) => void) | undefined;
  private done = false;

  constructor(private readonly res: ServerResponse) {
    res.on('close', this.onClose);
  }

  readonly hook: ClientGoneHook = (abort) => {
    this.abort = abort;
    return () => (this.abort = undefined);
  };

  cancel(reason: Error): void {
    this.abort?.(reason);
  }

  /** Stops watching (the call answered). */
  release(): void {
    this.done = true;
    this.abort = undefined;
  }

  // A response closes once: after its end (finished) or when its connection went first.
  private readonly onClose = (): void => {
    if (!this.done && !this.res.writableFinished) this.cancel(callerGone());
  };
}
