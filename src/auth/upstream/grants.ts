import type { TokenClient } from './spec.js';

/** The request forms of the two grants (RFC 6749 §4.4, RFC 8693 §2.1), audience as RFC 8707 `resource` and as `audience`. */

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
/** Issued types a Bearer access token may come back as (some servers say jwt for a JWT access token). */
export const USABLE_ISSUED_TYPES = new Set([ACCESS_TOKEN_TYPE, 'urn:ietf:params:oauth:token-type:jwt']);

export function clientCredentialsForm(client: TokenClient): Record<string, string> {
  return { grant_type: 'client_credentials', ...audienceAndScope(client.audience, client.scope) };
}

export function tokenExchangeForm(client: TokenClient & { audience: string }, subjectToken: string): Record<string, string> {
  return {
    grant_type: TOKEN_EXCHANGE_GRANT,
    subject_token: subjectToken,
    subject_token_type: ACCESS_TOKEN_TYPE,
    requested_token_type: ACCESS_TOKEN_TYPE,
    ...audienceAndScope(client.audience, client.scope),
  };
}

function audienceAndScope(audience: string | undefined, scope: string | undefined): Record<string, string> {
  return { ...(audience ? { resource: audience, audience } : {}), ...(scope ? { scope } : {}) };
}
