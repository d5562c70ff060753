import { GatewayError } from '../../errors.js';
import type { Caller } from '../caller.js';
import { bearerTokenOf } from '../token-vault.js';

/**
 * Whether an `aud` value names an upstream URL: an absolute http(s) URL with the same origin
 * (scheme, host, port) and, when it has a path, a path the upstream's path equals or lies under
 * (segment-wise: /v1 names /v1/x, not /v10). Anything else (opaque names such as `api://x`, a
 * query or fragment) names nothing: the gateway cannot tell which upstream it means.
 */
export function audienceNames(aud: string, upstream: URL): boolean {
  let a: URL;
  try {
    a = new URL(aud);
  } catch {
    return false;
  }
  if ((a.protocol !== 'https:' && a.protocol !== 'http:') || a.origin !== upstream.origin) return false;
  if (a.search || a.hash || a.username || a.password) return false;
  const base = a.pathname.replace(/\/+$/, '');
  return base === '' || upstream.pathname === base || upstream.pathname.startsWith(`${base}/`);
}

/** The caller's own token for `upstream`, or the 403 that refuses to forward it. */
export function passthroughToken(caller: Caller | undefined, upstream: URL, what: string): string {
  const token = caller && bearerTokenOf(caller);
  if (!caller?.identity || !token) throw needsUserToken(what, 'forwards the caller\'s own access token');
  if (!caller.identity.audience.some((aud) => audienceNames(aud, upstream))) {
    throw new GatewayError('FORBIDDEN', `${what} forwards the caller's access token only when its audience names ${upstream.origin}; this token's audience does not`, {
      modelMessage: 'This tool needs an access token issued for its upstream service; the one presented was issued for the gateway only. Do not retry; tell the user.',
      upstream: { transient: false, noEffect: true },
    });
  }
  return token;
}

/**
 * A caller without an access token (an API key) on a backend that acts for a user: 403, not 401.
 * The caller did authenticate; another attempt with the same key cannot succeed, and a 401 would
 * tell OAuth clients their sign-in failed.
 */
export function needsUserToken(what: string, how: string): GatewayError {
  return new GatewayError('FORBIDDEN', `${what} ${how}: call it with an OAuth access token, not an API key`, {
    modelMessage: 'This tool acts on behalf of a signed-in user, and this caller has no user token. Do not retry; tell the user.',
    upstream: { transient: false, noEffect: true },
  });
}
