import type { OidcIssuerConfig, Role } from '../../config/schema.js';
import { globToRegExp, type Caller, type TokenIdentity } from '../caller.js';
import { quote, tokenError } from './errors.js';

const ROLES: ReadonlySet<string> = new Set<Role>(['agent', 'approver', 'admin']);

/**
 * A claim by name: the name itself first (Auth0's namespaced claims are URLs with dots), else a
 * dotted path through nested objects (Keycloak's `realm_access.roles`).
 */
export function claimAt(claims: Record<string, unknown>, path: string): unknown {
  if (Object.hasOwn(claims, path)) return claims[path];
  let cur: unknown = claims;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur) || !Object.hasOwn(cur, part)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** An array of strings or a space-separated string; undefined when absent; anything else refuses the token. */
function stringList(claims: Record<string, unknown>, path: string, what: string): string[] | undefined {
  const v = claimAt(claims, path);
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v.split(/\s+/).filter(Boolean);
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
  throw tokenError('invalid_claims', `the ${what} claim '${path}' must be an array of strings or a space-separated string, not ${Array.isArray(v) ? 'an array of other values' : typeof v}`);
}

function prefixed(scopes: readonly string[], prefix: string | undefined): string[] {
  return prefix === undefined ? [] : scopes.filter((s) => s.startsWith(prefix) && s.length > prefix.length).map((s) => s.slice(prefix.length));
}

/** The token's scopes: `scope` (RFC 9068, space-separated) or `scp` (Entra, Okta: string or array). */
export function scopesOf(claims: Record<string, unknown>): string[] {
  const scope = stringList(claims, Object.hasOwn(claims, 'scope') ? 'scope' : 'scp', 'scope');
  return scope ?? [];
}

/**
 * The caller a verified token stands for: id from `claims.id`, roles from `claims.roles` and role
 * scopes, tool globs from `claims.tools` and tool scopes; the defaults where the token says
 * nothing. Unknown role names are ignored; a claim of the wrong type refuses the token.
 */
export function callerFromClaims(claims: Record<string, unknown>, cfg: OidcIssuerConfig): Caller {
  // A sender-constrained token (DPoP, mTLS: RFC 9449, RFC 8705) is worth its key only with a proof, which the gateway does not check.
  if (claims['cnf'] !== undefined) throw tokenError('wrong_type', 'the token is bound to a key (cnf); the gateway takes bearer tokens only');
  const idValue = claimAt(claims, cfg.claims.id);
  if (typeof idValue !== 'string' || idValue === '') {
    throw tokenError('invalid_claims', `the id claim '${cfg.claims.id}' is ${idValue === undefined ? 'missing' : `not a non-empty string (${quote(idValue)})`}`);
  }
  const sub = claims['sub'];
  if (sub !== undefined && typeof sub !== 'string') throw tokenError('invalid_claims', 'the sub claim is not a string');
  const scopes = scopesOf(claims);
  const roleNames = stringList(claims, cfg.claims.roles, 'roles');
  const roleScopes = prefixed(scopes, cfg.scopePrefixes?.roles);
  const roles = roleNames === undefined && roleScopes.length === 0 ? cfg.defaultRoles : [...(roleNames ?? []), ...roleScopes].filter((r): r is Role => ROLES.has(r));
  const toolNames = stringList(claims, cfg.claims.tools, 'tools');
  const toolScopes = prefixed(scopes, cfg.scopePrefixes?.tools);
  const tools = toolNames === undefined && toolScopes.length === 0 ? cfg.defaultTools : [...new Set([...(toolNames ?? []), ...toolScopes])];
  const clientId = typeof claims['client_id'] === 'string' ? claims['client_id'] : typeof claims['azp'] === 'string' ? claims['azp'] : undefined;
  const aud = claims['aud'];
  const identity: TokenIdentity = {
    issuer: cfg.issuer,
    subject: sub ?? idValue,
    ...(clientId === undefined ? {} : { clientId }),
    scopes,
    audience: typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud.filter((a): a is string => typeof a === 'string') : [],
    expiresAt: typeof claims['exp'] === 'number' ? claims['exp'] : 0,
  };
  return { id: idValue, roles: new Set(roles), toolPatterns: tools.map(globToRegExp), toolGlobs: tools, identity };
}
