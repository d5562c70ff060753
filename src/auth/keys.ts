import { sha256Hex } from '../util/hash.js';
import type { Config } from '../config/schema.js';
import { globToRegExp, type Caller } from './caller.js';

const ALL_ROLES = new Set(['agent', 'approver', 'admin'] as const);
// Module constants, not literals in the per-request code: a literal makes a RegExp object per evaluation.
const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * The key table: bearer key → caller. Keys are held only as sha256 digests and looked up by
 * digest, so the comparison leaks nothing about a key through timing.
 */
export class KeyTable {
  private readonly byDigest = new Map<string, Caller>();
  private readonly byId = new Map<string, Caller>();
  /** With no key configured (loopback only) or `auth.mode: none`, everyone is this caller. */
  readonly open: Caller | undefined;

  constructor(auth: Config['auth']) {
    for (const k of auth.keys) {
      const digest = (k.key ? sha256Hex(k.key) : (k.sha256 as string)).toLowerCase();
      const caller: Caller = {
        id: k.id,
        roles: new Set(k.roles),
        toolPatterns: k.tools.map(globToRegExp),
        ...(k.resources ? { resourcePatterns: k.resources.map(globToRegExp) } : {}),
        ...(k.prompts ? { promptPatterns: k.prompts.map(globToRegExp) } : {}),
      };
      this.byDigest.set(digest, caller);
      this.byId.set(k.id, caller);
    }
    // Open only with no credential of any kind configured: trusted issuers close it as keys do.
    const isOpen = auth.mode === 'none' || (auth.keys.length === 0 && auth.oidc.length === 0);
    this.open = isOpen ? { id: auth.mode === 'none' ? 'anonymous' : 'local', roles: ALL_ROLES, toolPatterns: [/^/] } : undefined;
  }

  /** A configured caller by id (an approved call runs as the caller that asked for it). */
  callerById(id: string): Caller | undefined {
    return this.open?.id === id ? this.open : this.byId.get(id);
  }

  /** The key's caller by the hex sha256 of the bearer value (the Authenticator hashes once for keys and tokens). */
  byKeyDigest(digest: string): Caller | undefined {
    return this.byDigest.get(digest);
  }

  /** The caller for an Authorization header value, or undefined when it names no known key. */
  resolve(authorization: string | undefined): Caller | undefined {
    if (this.open) return this.open;
    if (!authorization) return undefined;
    const m = BEARER.exec(authorization);
    return m ? this.byDigest.get(sha256Hex(m[1] as string)) : undefined;
  }
}
