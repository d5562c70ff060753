import { decodeJwt } from 'jose';
import type { Config } from '../config/schema.js';
import { GatewayError } from '../errors.js';
import { sha256Hex } from '../util/hash.js';
import type { Caller } from './caller.js';
import { KeyTable } from './keys.js';
import { quote, tokenError } from './oidc/errors.js';
import { TrustedIssuer, type IssuerRuntime } from './oidc/issuer.js';
import { TokenCache } from './token-cache.js';
import { attachToken } from './token-vault.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;
const JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
/** Larger bearer values are refused before any parsing (a JWT access token is a few KiB at most). */
export const MAX_TOKEN_CHARS = 16 * 1024;

/** Trusted issuers are in force (the same answer as `Authenticator.oidcEnabled`, from the config alone). */
export function oidcConfigured(config: Pick<Config, 'auth'>): boolean {
  return config.auth.mode !== 'none' && config.auth.oidc.length > 0;
}

export interface AuthenticatorOptions extends IssuerRuntime {
  /** How long a verified token is kept at most (default 5 min; never past its exp). */
  readonly tokenCacheMaxAgeMs?: number;
  readonly tokenCacheMaxEntries?: number;
}

/**
 * Who is calling, from the Authorization header: an API key of the key table, else (issuers
 * configured) an access token of a trusted issuer. A key, or a token verified before, is answered
 * synchronously (one hash, one or two map lookups); a new token returns a promise.
 */
export class Authenticator {
  readonly keys: KeyTable;
  readonly issuers: readonly TrustedIssuer[];
  /** Trusted issuers are configured (the oidc-surface code asks this for WWW-Authenticate and metadata). */
  readonly oidcEnabled: boolean;
  private readonly cache: TokenCache;
  private readonly verifying = new Map<string, Promise<Caller>>();
  private readonly byIssuer: Map<string, TrustedIssuer>;

  constructor(config: Pick<Config, 'auth' | 'server'>, opts: AuthenticatorOptions = {}) {
    this.keys = new KeyTable(config.auth);
    const open = this.keys.open !== undefined;
    this.issuers = open ? [] : config.auth.oidc.map((i) => new TrustedIssuer(i, config.server.publicUrl, opts));
    this.oidcEnabled = this.issuers.length > 0;
    this.byIssuer = new Map(this.issuers.map((i) => [i.config.issuer, i]));
    this.cache = new TokenCache(opts.tokenCacheMaxEntries, opts.tokenCacheMaxAgeMs, opts.now);
  }

  /** A configured API-key caller by id (an approved call runs as the caller that asked for it). */
  callerById(id: string): Caller | undefined {
    return this.keys.callerById(id);
  }

  /** The caller, a 401 to answer, or (a token not seen before) a promise of either. */
  resolve(authorization: string | undefined): Caller | GatewayError | Promise<Caller> {
    const open = this.keys.open;
    if (open) return open;
    if (!authorization) return new GatewayError('UNAUTHENTICATED', this.oidcEnabled ? 'missing Authorization: Bearer <API key or access token>' : 'missing Authorization: Bearer <key>');
    const m = BEARER.exec(authorization);
    if (!m) return new GatewayError('UNAUTHENTICATED', this.oidcEnabled ? 'the Authorization header is not "Bearer <API key or access token>"' : 'unknown API key');
    const token = m[1] as string;
    const digest = sha256Hex(token);
    const key = this.keys.byKeyDigest(digest);
    if (key) return key;
    if (!this.oidcEnabled) return new GatewayError('UNAUTHENTICATED', 'unknown API key');
    const cached = this.cache.get(digest);
    if (cached) return cached;
    if (token.length > MAX_TOKEN_CHARS) return tokenError('token_too_large', `the token is longer than ${MAX_TOKEN_CHARS} characters`);
    // One verification per token at a time: a burst of calls with a new token waits for the first.
    const pending = this.verifying.get(digest);
    if (pending) return pending;
    const p = this.verify(token).then(
      (caller) => {
        // A token must not act as an API key's caller: ids own call records, confirmations and limits.
        if (this.keys.callerById(caller.id)) throw tokenError('invalid_claims', `the token's caller id ${quote(caller.id)} is the id of an API key`);
        attachToken(caller, token);
        this.cache.set(digest, caller);
        return caller;
      },
    ).finally(() => this.verifying.delete(digest));
    this.verifying.set(digest, p);
    return p;
  }

  private async verify(token: string): Promise<Caller> {
    try {
      if (JWS.test(token)) return await this.verifyJwt(token);
      const introspecting = this.issuers.filter((i) => i.introspects);
      if (introspecting.length === 0) {
        throw tokenError('malformed', token.split('.').length === 5 ? 'encrypted (JWE) tokens are not accepted' : 'neither a known API key nor a JWT access token');
      }
      let last: unknown;
      for (const issuer of introspecting) {
        try {
          return await issuer.introspect(token);
        } catch (e) {
          last = e;
        }
      }
      throw last;
    } catch (e) {
      // Whatever went wrong, a 401 with a reason: never a 500, never the token in the message.
      throw e instanceof GatewayError ? e : tokenError('malformed', 'the token could not be checked');
    }
  }

  /** Picks the issuer by the token's (unverified) iss, then verifies against that issuer only. */
  private async verifyJwt(token: string): Promise<Caller> {
    let iss: unknown;
    try {
      iss = decodeJwt(token).iss;
    } catch {
      throw tokenError('malformed', 'the token\'s payload is not a JSON object');
    }
    if (typeof iss !== 'string') throw tokenError('wrong_issuer', 'the token has no iss claim');
    const issuer = this.byIssuer.get(iss);
    if (!issuer) throw tokenError('wrong_issuer', `the token's issuer ${quote(iss)} is not a trusted issuer`);
    return issuer.verifyJwt(token);
  }
}
