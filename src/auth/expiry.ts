import type { ServerResponse } from 'node:http';
import type { Caller } from './caller.js';

/** setTimeout's longest delay (about 24.8 days); a token living longer is not timed. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/**
 * Ends a long-lived stream (an SSE session, a listen stream) when the access token that opened it
 * expires: a stream must not outlive the authority it was opened under, so a user whose token is
 * no longer renewed stops receiving at its exp. The client reconnects with a fresh token. API-key
 * callers, and tokens without exp (an introspection answer may omit it), are not timed.
 */
export function endAtExpiry(caller: Caller, res: ServerResponse, end: () => void, now: () => number = Date.now): void {
  const exp = caller.identity?.expiresAt;
  if (!exp) return;
  const ms = exp * 1000 - now();
  if (ms > MAX_DELAY_MS) return;
  const timer = setTimeout(end, Math.max(0, ms));
  timer.unref();
  res.once('close', () => clearTimeout(timer));
}
