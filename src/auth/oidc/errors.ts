import { errors as jose } from 'jose';
import { GatewayError } from '../../errors.js';

/** Why a bearer token was refused: `details[0].reason` of the 401 (stable strings, for clients and tests). */
export type TokenReason =
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'algorithm_not_allowed'
  | 'unknown_key_id'
  | 'bad_signature'
  | 'token_too_large'
  | 'malformed'
  | 'wrong_type'
  | 'invalid_claims'
  | 'inactive'
  | 'issuer_unavailable';

const MODEL_MESSAGE: Partial<Record<TokenReason, string>> = {
  expired: 'The access token has expired. Get a new token from the identity provider; do not retry with this one.',
  issuer_unavailable: 'The gateway could not reach the token issuer to check the token. Try again shortly; do not get a new token for this.',
};

/**
 * The 401 for a refused token. The message names the reason in words; it never quotes the token
 * (claims quoted are cut short, and only ones a caller chose, like iss or kid).
 */
export function tokenError(reason: TokenReason, message: string, cause?: unknown): GatewayError {
  return new GatewayError('UNAUTHENTICATED', `access token refused: ${message}`, {
    modelMessage: MODEL_MESSAGE[reason] ?? 'The gateway did not accept the access token. A valid token (or API key) is needed; do not retry with this one.',
    details: [{ message, reason }],
    ...(cause === undefined ? {} : { cause }),
  });
}

export function isTokenError(e: unknown): e is GatewayError {
  return e instanceof GatewayError && e.code === 'UNAUTHENTICATED';
}

/** A claim value fit for an error message: short, one line. */
export function quote(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v) ?? String(v);
  return `'${s.replace(/[\u0000-\u001f\u007f]/g, '?').slice(0, 80)}${s.length > 80 ? '…' : ''}'`;
}

/** jose's verification errors as typed reasons (anything else is a malformed token). */
export function fromJose(e: unknown): GatewayError {
  if (e instanceof GatewayError) return e;
  if (e instanceof jose.JWTExpired) return tokenError('expired', 'the token has expired (exp is in the past)');
  if (e instanceof jose.JWTClaimValidationFailed) {
    // A claim of the wrong type (exp, nbf, iat as strings) is not a timing or issuer question.
    if (e.reason === 'invalid') return tokenError('invalid_claims', `the token's ${e.claim} claim is not a number`);
    switch (e.claim) {
      case 'nbf':
        return tokenError('not_yet_valid', 'the token is not valid yet (nbf is in the future)');
      case 'iat':
        return tokenError('not_yet_valid', 'the token was issued in the future (iat)');
      case 'iss':
        return tokenError('wrong_issuer', 'the token\'s iss is not this issuer');
      case 'aud':
        return tokenError('wrong_audience', 'the token\'s aud does not name this gateway');
      default:
        return tokenError('invalid_claims', `the token's ${e.claim} claim is ${e.reason === 'missing' ? 'missing' : 'invalid'}`);
    }
  }
  if (e instanceof jose.JOSEAlgNotAllowed) return tokenError('algorithm_not_allowed', 'the token\'s signing algorithm is not allowed for this issuer');
  if (e instanceof jose.JWKSNoMatchingKey) return tokenError('unknown_key_id', 'no key of the issuer matches the token\'s kid');
  if (e instanceof jose.JWSSignatureVerificationFailed) return tokenError('bad_signature', 'the token\'s signature does not verify');
  return tokenError('malformed', 'the token is not a well-formed signed JWT');
}
