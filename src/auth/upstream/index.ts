import { Agent, type Dispatcher } from 'undici';
import { sha256Hex } from '../../util/hash.js';
import type { Caller } from '../caller.js';
import { bearerTokenOf } from '../token-vault.js';
import { TokenCache, type Got } from './cache.js';
import { USABLE_ISSUED_TYPES, clientCredentialsForm, tokenExchangeForm } from './grants.js';
import { needsUserToken, passthroughToken } from './passthrough.js';
import type { UpstreamCredentials } from './spec.js';
import { failure, requestToken } from './token-endpoint.js';

export type { UpstreamCredentials } from './spec.js';

/** A token endpoint gets at most this long, and answers a little before the call's deadline so its own 502 is seen. */
const MAX_TOKEN_WAIT_MS = 10_000;

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
        return this.cache.get(`cc\0${req.key}`, () => this.fetch(creds.client, clientCredentialsForm(creds.client), req));
      case 'tokenExchange': {
        const subject = req.caller && bearerTokenOf(req.caller);
        if (!subject) throw needsUserToken(req.what, "exchanges the caller's access token for one to the upstream");
        return this.cache.get(this.exchangeKey(req.key, subject), async () => {
          const issued = await this.fetch(creds.client, tokenExchangeForm(creds.client, subject), req);
          if (issued.issuedTokenType !== undefined && !USABLE_ISSUED_TYPES.has(issued.issuedTokenType)) {
            throw failure(req.what, 'issued a token that is not an access token', false);
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

  async close(): Promise<void> {
    if (this.ownDispatcher) await this.dispatcher.close();
  }

  private exchangeKey(key: string, subject: string): string {
    return `tx\0${key}\0${sha256Hex(subject)}`;
  }

  private fetch(client: Parameters<typeof requestToken>[0], form: Record<string, string>, req: CredentialRequest) {
    const left = req.deadline - this.now();
    const deadline = this.now() + Math.min(MAX_TOKEN_WAIT_MS, left - Math.min(250, Math.max(10, left * 0.05)));
    return requestToken(client, form, { deadline, dispatcher: this.dispatcher, what: req.what, now: this.now });
  }
}
