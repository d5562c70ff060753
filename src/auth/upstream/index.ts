import { Agent, type Dispatcher } from 'undici';
import { sha256Hex } from '../../util/hash.js';
import type { Caller } from '../caller.js';
import { bearerTokenOf } from '../token-vault.js';
import { TokenCache } from './cache.js';
import { USABLE_ISSUED_TYPES, clientCredentialsForm, tokenExchangeForm } from './grants.js';
import { needsUserToken, passthroughToken } from './passthrough.js';
import type { TokenClient, UpstreamCredentials } from './spec.js';
import { TokenEndpointError, failure, requestToken, type IssuedToken } from './token-endpoint.js';

export type { UpstreamCredentials } from './spec.js';

/** A token request gets at most this long (and never past the deadline of the call that started it). */
const MAX_TOKEN_WAIT_MS = 10_000;

/** A token for one request, and whether it was fetched for it (a cached one may have been revoked early). */
export interface Got {
  readonly token: string;
  readonly fresh: boolean;
}

export interface CredentialRequest {
  /** Stable per backend definition (its file's version included): tokens are never shared across keys. */
  readonly key: string;
  /** Names the backend in errors ("backend 'b' of tool 't'"). */
  readonly what: string;
  /** The URL the request goes to (passthrough checks the token's audience against it). */
  readonly upstream: URL;
  readonly caller: Caller | undefined;
  /** Epoch ms by which the call must end. */
  readonly deadline: number;
}

export interface UpstreamTokensOptions {
  readonly now?: () => number;
  readonly dispatcher?: Dispatcher;
  readonly maxEntries?: number;
}

/**
 * Bearer tokens for upstreams, the one place that talks to token endpoints: client credentials
 * (one token per backend), token exchange (one per backend and caller token, keyed by the token's
 * hash) and passthrough (the caller's token, when its audience names the upstream).
 */
export class UpstreamTokens {
  private readonly cache: TokenCache;
  private readonly dispatcher: Dispatcher;
  private readonly ownDispatcher: boolean;
  private closing: Promise<void> | undefined;
  private readonly now: () => number;

  constructor(opts: UpstreamTokensOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.cache = new TokenCache(this.now, opts.maxEntries);
    this.ownDispatcher = opts.dispatcher === undefined;
    this.dispatcher = opts.dispatcher ?? new Agent({ connections: 16, keepAliveTimeout: 10_000 });
  }

  /** The token to send as `Authorization: Bearer …`; `fresh` when it was fetched for this request. */
  async token(creds: UpstreamCredentials, req: CredentialRequest): Promise<Got> {
    switch (creds.kind) {
      case 'passthrough':
        return { token: passthroughToken(req.caller, req.upstream, req.what), fresh: false };
      case 'clientCredentials':
        return this.get(`cc\0${req.key}`, req, (ms) => this.fetch(creds.client, clientCredentialsForm(creds.client), ms));
      case 'tokenExchange': {
        const subject = req.caller && bearerTokenOf(req.caller);
        if (!subject) throw needsUserToken(req.what, "exchanges the caller's access token for one to the upstream");
        return this.get(this.exchangeKey(req.key, subject), req, async (ms) => {
          const issued = await this.fetch(creds.client, tokenExchangeForm(creds.client, subject), ms);
          if (issued.issuedTokenType !== undefined && !USABLE_ISSUED_TYPES.has(issued.issuedTokenType)) {
            throw new TokenEndpointError('issued a token that is not an access token', false);
          }
          return issued;
        });
      }
    }
  }

  /** Forgets a token the upstream refused (401), so that the next call fetches another. */
  invalidate(creds: UpstreamCredentials, req: Pick<CredentialRequest, 'key' | 'caller'>, token: string): void {
    if (creds.kind === 'clientCredentials') this.cache.invalidate(`cc\0${req.key}`, token);
    else if (creds.kind === 'tokenExchange') {
      const subject = req.caller && bearerTokenOf(req.caller);
      if (subject) this.cache.invalidate(this.exchangeKey(req.key, subject), token);
    }
  }

  /** Tokens held (tests, metrics). */
  get cached(): number {
    return this.cache.size;
  }

  /** Idempotent: a pool and the gateway may both close it. */
  async close(): Promise<void> {
    if (!this.ownDispatcher || this.closing) return this.closing;
    this.closing = this.dispatcher.close();
    return this.closing;
  }

  private exchangeKey(key: string, subject: string): string {
    return `tx\0${key}\0${sha256Hex(subject)}`;
  }

  /**
   * The cached token, or a new one: one fetch per key at a time, shared by whoever asks meanwhile
   * and bounded by the budget of the call that started it. Each waiter also gives up at its own
   * budget: a little before its deadline, so that its answer is this 502 rather than the call's 504.
   */
  private async get(key: string, req: CredentialRequest, fetch: (ms: number) => Promise<IssuedToken>): Promise<Got> {
    const hit = this.cache.peek(key);
    if (hit !== undefined) return { token: hit, fresh: false };
    const left = req.deadline - this.now();
    const ms = Math.max(1, Math.ceil(left - Math.min(250, Math.max(10, left * 0.05))));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(failure(req.what, `did not answer within ${ms} ms`, true)), ms);
    });
    try {
      const issued = await Promise.race([this.cache.renew(key, () => fetch(ms)), late]);
      return { token: issued.accessToken, fresh: true };
    } catch (e) {
      // A shared fetch does not know whose calls it fails: each is told in its own words.
      throw e instanceof TokenEndpointError ? failure(req.what, e.how, e.transient) : e;
    } finally {
      clearTimeout(timer);
    }
  }

  private fetch(client: TokenClient, form: Record<string, string>, ms: number): Promise<IssuedToken> {
    return requestToken(client, form, { deadline: this.now() + Math.min(MAX_TOKEN_WAIT_MS, ms), dispatcher: this.dispatcher, now: this.now });
  }
}
