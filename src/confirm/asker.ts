import type { Role } from '../config/schema.js';
import { globToRegExp, type Caller, type TokenIdentity } from '../auth/caller.js';

/**
 * The token caller that asked for a gated call, as it was then: kept in the confirmation because a
 * token caller is in no key table to look up at approval. Never the token itself.
 */
export interface AskerSnapshot {
  id: string;
  roles: Role[];
  tools: string[];
  identity: TokenIdentity;
}

/** The snapshot of a token caller; API-key callers are looked up by id at approval (a removed key refuses). */
export function snapshotOf(caller: Caller): AskerSnapshot | undefined {
  if (!caller.identity) return undefined;
  return { id: caller.id, roles: [...caller.roles], tools: [...(caller.toolGlobs ?? [])], identity: { ...caller.identity } };
}

export function callerFromSnapshot(s: AskerSnapshot): Caller {
  return { id: s.id, roles: new Set(s.roles), toolPatterns: s.tools.map(globToRegExp), toolGlobs: s.tools, identity: s.identity };
}
