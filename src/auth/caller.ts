import type { Role } from '../config/schema.js';
import type { CompiledTool } from '../tools/types.js';

/** Who stands behind an access token (absent for API-key callers). */
export interface TokenIdentity {
  readonly issuer: string;
  readonly subject: string;
  readonly clientId?: string;
  readonly scopes: readonly string[];
  /** The token's aud values: passthrough to an upstream needs one that names it. */
  readonly audience: readonly string[];
  /** Epoch seconds. */
  readonly expiresAt: number;
}

/** Who is calling: resolved once per request from its API key or access token. */
export interface Caller {
  readonly id: string;
  readonly roles: ReadonlySet<Role>;
  /** Tool-name globs of the key or token, compiled once. */
  readonly toolPatterns: readonly RegExp[];
  /** The globs themselves (a confirmation keeps them to run an approved call as its caller). */
  readonly toolGlobs?: readonly string[];
  /** A key's `resources` / `prompts` globs, compiled (absent: derived from the tool globs, src/mcp-server/visibility.ts). */
  readonly resourcePatterns?: readonly RegExp[];
  readonly promptPatterns?: readonly RegExp[];
  readonly identity?: TokenIdentity;
}

export function globToRegExp(glob: string): RegExp {
  const body = glob.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp(`^${body}$`);
}

/** The tool is visible to the caller: a key glob matches its name and, if it names roles, the caller has one. */
export function canSee(caller: Caller, tool: CompiledTool): boolean {
  if (!caller.toolPatterns.some((re) => re.test(tool.name))) return false;
  const roles = tool.visibility.roles;
  return roles === undefined || roles.some((r) => caller.roles.has(r));
}

export function hasRole(caller: Caller, role: Role): boolean {
  return caller.roles.has(role);
}

/**
 * The key a caller's state is kept under (rate limits, loop guard, idempotency, MCP sessions): its
 * id, qualified by the issuer for a token caller, so that two issuers' subjects with the same claim
 * value, or a token subject named like an API key, never share a bucket or a session.
 */
export function callerKey(caller: Caller): string {
  return caller.identity ? `${caller.identity.issuer}\u0000${caller.id}` : caller.id;
}

/**
 * The key an MCP session (2025 sessions, /sse sessions, a 2026-07-28 input request) is bound to:
 * callerKey, and the token's subject when the caller id is another claim (`claims.id: client_id`),
 * so that two people signed in through one client never reach each other's session.
 */
export function sessionKey(caller: Caller): string {
  const id = caller.identity;
  return id && id.subject !== caller.id ? `${callerKey(caller)}\u0000${id.subject}` : callerKey(caller);
}

/** The same person: issuer and subject when both are token callers (one person with two clients is one), never a key and a token, else the key id. */
export function samePerson(a: { id: string; identity?: Pick<TokenIdentity, 'issuer' | 'subject'> | undefined }, b: { id: string; identity?: Pick<TokenIdentity, 'issuer' | 'subject'> | undefined }): boolean {
  if (a.identity && b.identity) return a.identity.issuer === b.identity.issuer && a.identity.subject === b.identity.subject;
  if (a.identity || b.identity) return false;
  return a.id === b.id;
}

/**
 * `{ issuer }` of a token caller, for records that name their caller (with the id, who may read
 * them), and `subject` when the id is another claim (`claims.id: client_id`): a record is a person's.
 */
export function issuerField(caller: Caller): { issuer?: string; subject?: string } {
  const id = caller.identity;
  if (!id) return {};
  return id.subject === caller.id ? { issuer: id.issuer } : { issuer: id.issuer, subject: id.subject };
}

/** The caller that made a record (by id and, for tokens, issuer, and the subject the record names) is this one. */
export function madeBy(record: { caller: string; issuer?: string | undefined; subject?: string | undefined }, caller: Caller): boolean {
  if (record.caller !== caller.id || record.issuer !== caller.identity?.issuer) return false;
  return record.subject === undefined || record.subject === caller.identity?.subject;
}
