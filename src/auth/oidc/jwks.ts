import { createLocalJWKSet, errors as jose, type JSONWebKeySet, type JWSHeaderParameters, type FlattenedJWSInput } from 'jose';
import { fetchJson, IssuerFetchError } from './fetch-json.js';
import { tokenError } from './errors.js';

type KeyResolver = ReturnType<typeof createLocalJWKSet>;
type ResolvedKey = Awaited<ReturnType<KeyResolver>>;

export interface JwksOptions {
  readonly timeoutMs: number;
  /** At most one fetch per this interval, whatever asks for it (unknown kids, a failing endpoint). */
  readonly cooldownMs: number;
  /** Keys older than this are refetched in the background (served meanwhile). */
  readonly maxAgeMs: number;
  readonly now?: () => number;
}

const MAX_JWKS_BYTES = 512 * 1024;

/** A JSON Web Key Set as RFC 7517 shapes it, or why not. */
export function checkJwks(doc: unknown): JSONWebKeySet {
  const keys = (doc as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new IssuerFetchError('the JWKS has no keys array');
  if (!keys.every((k) => k !== null && typeof k === 'object' && typeof (k as { kty?: unknown }).kty === 'string')) {
    throw new IssuerFetchError('the JWKS holds an entry that is not a JWK');
  }
  return doc as JSONWebKeySet;
}

/**
 * One issuer's signing keys. Fetched on first use and kept: a JWKS endpoint that is down, hangs or
 * serves garbage leaves the keys already had in use; with no key ever had, tokens are refused.
 * An unknown kid triggers a refetch, but the cooldown bounds fetches whatever the callers send, so
 * a flood of random kids costs the issuer at most one request per interval.
 */
export class JwksCache {
  private resolver: KeyResolver | undefined;
  private fetchedAt = 0;
  private lastAttempt = Number.NEGATIVE_INFINITY;
  private lastError: IssuerFetchError | undefined;
  private pending: Promise<void> | undefined;
  /** Fetches made (tests and `check` read it). */
  fetches = 0;
  keyCount = 0;

  constructor(
    private readonly uri: () => Promise<string>,
    private readonly opts: JwksOptions,
  ) {}

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  /** The key for a token's protected header: jose's `jwtVerify` calls this. */
  async key(header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<ResolvedKey> {
    if (!this.resolver) await this.refresh();
    const resolver = this.resolver;
    if (!resolver) {
      throw tokenError('issuer_unavailable', `the issuer's signing keys are unavailable: ${this.lastError?.message ?? 'never fetched'}`);
    }
    if (this.now() - this.fetchedAt > this.opts.maxAgeMs) void this.refresh(); // served from cache meanwhile
    try {
      return await resolver(header, token);
    } catch (e) {
      if (!(e instanceof jose.JWKSNoMatchingKey)) throw e;
      await this.refresh(); // a rotation; no-op within the cooldown
      if (this.resolver === resolver) throw e;
      return (this.resolver as KeyResolver)(header, token);
    }
  }

  /** Fetches the set unless one fetch is under way (joined) or the last one began within the cooldown. Never throws. */
  refresh(): Promise<void> {
    if (this.pending) return this.pending;
    const now = this.now();
    if (now - this.lastAttempt < this.opts.cooldownMs) return Promise.resolve();
    this.lastAttempt = now;
    this.pending = this.load().finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async load(): Promise<void> {
    this.fetches++;
    try {
      const uri = await this.uri();
      const set = checkJwks(await fetchJson(uri, { timeoutMs: this.opts.timeoutMs, maxBytes: MAX_JWKS_BYTES }).catch((e: unknown) => {
        throw new IssuerFetchError(`JWKS ${uri}: ${e instanceof Error ? e.message : String(e)}`);
      }));
      this.resolver = createLocalJWKSet(set);
      this.keyCount = set.keys.length;
      this.fetchedAt = this.now();
      this.lastError = undefined;
    } catch (e) {
      this.lastError = e instanceof IssuerFetchError ? e : new IssuerFetchError(e instanceof Error ? e.message : String(e));
    }
  }

  get error(): string | undefined {
    return this.lastError?.message;
  }
}
