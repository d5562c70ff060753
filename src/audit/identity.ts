import type { TokenIdentity } from '../auth/caller.js';

/** The audit fields of a token caller (none for an API key): who stands behind the call. Never the token. */
export function identityFields(identity: TokenIdentity | undefined): { subject?: string; clientId?: string; issuer?: string } {
  if (!identity) return {};
  return { subject: identity.subject, ...(identity.clientId !== undefined ? { clientId: identity.clientId } : {}), issuer: identity.issuer };
}

/** The same for the approver of a decision. */
export function approverIdentityFields(identity: TokenIdentity | undefined): { approverSubject?: string; approverClientId?: string; approverIssuer?: string } {
  if (!identity) return {};
  return {
    approverSubject: identity.subject,
    ...(identity.clientId !== undefined ? { approverClientId: identity.clientId } : {}),
    approverIssuer: identity.issuer,
  };
}
