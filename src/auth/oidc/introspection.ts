import { fetchJson, IssuerFetchError } from './fetch-json.js';
import { quote, tokenError } from './errors.js';

export interface IntrospectionTarget {
  readonly endpoint: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly issuer: string;
  readonly audiences: readonly string[];
  readonly clockSkewSeconds: number;
  readonly timeoutMs: number;
}

/** What `token_type` (RFC 7662) or Keycloak's `typ` say of an access token. */
const ACCESS_TYPES = new Set(['bearer', 'access_token', 'urn:ietf:params:oauth:token-type:access_token']); // not DPoP: no proof is checked here

/** RFC 6749 §2.3.1: each part form-encoded before the Basic encoding. */
function basic(id: string, secret: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64')}`;
}

/**
 * RFC 7662: asks the issuer about an opaque token and checks the answer as a JWT's claims would be
 * (active, exp, nbf, iss, aud). Returns the answer's claims for the caller mapping.
 */
export async function introspect(token: string, t: IntrospectionTarget, nowSeconds: number): Promise<Record<string, unknown>> {
  let answer: unknown;
  try {
    answer = await fetchJson(t.endpoint, {
      timeoutMs: t.timeoutMs,
      maxBytes: 64 * 1024,
      // A redirect would re-send the token and the client secret to wherever it points, and its answer would be trusted.
      redirect: 'manual',
      init: {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(t.clientId, t.clientSecret) },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
      },
    });
  } catch (e) {
    throw tokenError('issuer_unavailable', `the introspection endpoint failed: ${e instanceof Error ? e.message : String(e)}`, e instanceof IssuerFetchError ? undefined : e);
  }
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) throw tokenError('issuer_unavailable', 'the introspection endpoint answered something that is not a JSON object');
  const c = answer as Record<string, unknown>;
  if (c['active'] !== true) throw tokenError('inactive', 'the issuer says the token is not active');
  // Active is not enough: a refresh token (or an ID token) introspects as active too, and is no access token.
  for (const f of ['token_type', 'typ'] as const) {
    const v = c[f];
    if (v !== undefined && (typeof v !== 'string' || !ACCESS_TYPES.has(v.toLowerCase()))) throw tokenError('wrong_type', `the issuer says the token is ${quote(v)} (${f}), not an access token`);
  }
  const skew = t.clockSkewSeconds;
  if (c['exp'] !== undefined && (typeof c['exp'] !== 'number' || c['exp'] <= nowSeconds - skew)) throw tokenError('expired', 'the token has expired (exp is in the past)');
  if (typeof c['nbf'] === 'number' && c['nbf'] > nowSeconds + skew) throw tokenError('not_yet_valid', 'the token is not valid yet (nbf is in the future)');
  if (c['iss'] !== undefined && c['iss'] !== t.issuer) throw tokenError('wrong_issuer', `the token's iss ${quote(c['iss'])} is not this issuer`);
  const aud = c['aud'];
  if (aud !== undefined) {
    const auds = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : [];
    if (!auds.some((a) => t.audiences.includes(a as string))) throw tokenError('wrong_audience', 'the token\'s aud does not name this gateway');
  }
  return c;
}
