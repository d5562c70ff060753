import type { Caller } from './caller.js';

/**
 * The raw access token a caller presented, kept beside the caller object rather than on it, so
 * that no log line, audit record, error or JSON serialization of a caller can ever carry it.
 * Only upstream credentials (token exchange, passthrough) read it.
 */
const tokens = new WeakMap<Caller, string>();

export function attachToken(caller: Caller, token: string): void {
  tokens.set(caller, token);
}

export function bearerTokenOf(caller: Caller): string | undefined {
  return tokens.get(caller);
}
