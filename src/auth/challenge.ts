import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../errors.js';
import type { Caller } from './caller.js';
import { issuerOf, type ProtectedResource } from './resource.js';

/** What a client of a gateway without OAuth should do instead of starting an OAuth flow. */
export const KEYS_ONLY =
  'this gateway takes API keys only and has no OAuth authorization server (its 401 means the key sent was missing or unknown): send the header "Authorization: Bearer <key>" with a key from its auth.keys ' +
  '(mcp-remote: --header "Authorization:Bearer ${KEY}"; MCP Inspector: --header "Authorization: Bearer <key>")';

const KEYS_ONLY_MODEL = 'The gateway takes API keys only and did not accept this one. A valid API key is needed; do not retry without one.';

/** An RFC 6750 auth-param value: printable ASCII without quote or backslash, bounded (never a header injection). */
function quoted(text: string): string {
  return `"${text.replace(/[^\x20-\x7E]|["\\]/g, ' ').slice(0, 300)}"`;
}

const presented = (req: FastifyRequest): boolean => typeof req.headers.authorization === 'string' && req.headers.authorization.trim() !== '';

/** The caller of a request that got past authentication (undefined before it, or in a route without it). */
const callerOf = (req: FastifyRequest): Caller | undefined => (req as { caller?: Caller | null }).caller ?? undefined;

/**
 * The scopes a token caller refused a route's role would need: the issuer's role scope when it maps
 * scopes to roles (`scopePrefixes.roles`), else none (the role comes from a claim no scope changes).
 * Undefined when the refusal was not for the route's role.
 */
function roleScopes(req: FastifyRequest, caller: Caller, pr: ProtectedResource): string[] | undefined {
  const role = req.routeOptions.config?.role;
  if (!role || caller.roles.has(role) || !caller.identity) return undefined;
  const prefix = issuerOf(pr, caller.identity.issuer)?.scopePrefixes?.roles;
  return prefix ? [`${prefix}${role}`] : [];
}

export interface Challenged {
  error: GatewayError;
  /** The WWW-Authenticate value, when the answer carries one. */
  header?: string;
}

/**
 * The authentication challenge of a 401 or 403 (RFC 6750, RFC 9728 §5.1, MCP authorization):
 * with OAuth, every 401 names the metadata document and a 403 of a token caller names the scope it
 * lacks; with API keys only, the 401 says so, so that an OAuth client shows the fix instead of
 * failing a flow the gateway cannot serve.
 */
export function challengeFor(err: GatewayError, req: FastifyRequest, pr: ProtectedResource | undefined): Challenged {
  if (err.code === 'UNAUTHENTICATED') {
    // A token the issuer's endpoints could not check may be good: no invalid_token, so the client does not throw it away.
    const unchecked = err.details[0]?.['reason'] === 'issuer_unavailable';
    const invalid = !presented(req) ? '' : `${unchecked ? '' : ', error="invalid_token"'}, error_description=${quoted(err.message)}`;
    if (pr) return { error: err, header: pr.metadataUrl ? `Bearer resource_metadata=${quoted(pr.metadataUrl)}${invalid}` : `Bearer realm="toolgate"${invalid}` };
    const error = new GatewayError('UNAUTHENTICATED', `${err.message}: ${KEYS_ONLY}`, { modelMessage: KEYS_ONLY_MODEL, details: err.details });
    const why = presented(req) ? ', error="invalid_token"' : '';
    return { error, header: `Bearer realm="toolgate"${why}, error_description=${quoted('this gateway takes API keys only (no OAuth): send Authorization: Bearer <key>')}` };
  }
  const caller = callerOf(req);
  if (err.code === 'FORBIDDEN' && pr && caller?.identity) {
    const scopes = err.insufficientScope ?? roleScopes(req, caller, pr);
    if (scopes === undefined) return { error: err };
    const scope = scopes.length > 0 ? `, scope=${quoted(scopes.join(' '))}` : '';
    const metadata = pr.metadataUrl ? `, resource_metadata=${quoted(pr.metadataUrl)}` : '';
    return { error: err, header: `Bearer error="insufficient_scope"${scope}${metadata}, error_description=${quoted(err.message)}` };
  }
  return { error: err };
}
