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
