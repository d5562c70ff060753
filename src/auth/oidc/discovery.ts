import { fetchJson, insecureUrl, IssuerFetchError } from './fetch-json.js';

export interface DiscoveryDocument {
  readonly issuer: string;
  readonly jwks_uri?: string;
  readonly introspection_endpoint?: string;
  readonly [field: string]: unknown;
}

export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

/**
 * Fetches `<issuer>/.well-known/openid-configuration` and checks it: its `issuer` must be the
 * configured one exactly (OpenID Connect Discovery §4.3), else a look-alike could name other keys.
 */
export async function fetchDiscovery(issuer: string, opts: { timeoutMs: number }): Promise<DiscoveryDocument> {
  const url = discoveryUrl(issuer);
  let doc: unknown;
  try {
    doc = await fetchJson(url, { timeoutMs: opts.timeoutMs, maxBytes: 256 * 1024 });
  } catch (e) {
    throw new IssuerFetchError(`discovery document ${url}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new IssuerFetchError(`discovery document ${url} is not a JSON object`);
  const d = doc as Record<string, unknown>;
  if (d['issuer'] !== issuer) {
    throw new IssuerFetchError(`discovery document ${url} names the issuer ${JSON.stringify(d['issuer'])}, not ${JSON.stringify(issuer)}`);
  }
  for (const f of ['jwks_uri', 'introspection_endpoint'] as const) {
    const v = d[f];
    if (v !== undefined && (typeof v !== 'string' || !/^https?:\/\//.test(v) || !URL.canParse(v))) throw new IssuerFetchError(`discovery document ${url}: ${f} is not an http(s) URL`);
    // The same rule as for configured endpoints: keys (or a token) over plain http could be swapped (or read) on the way.
    if (typeof v === 'string' && insecureUrl(new URL(v))) throw new IssuerFetchError(`discovery document ${url}: ${f} must use https (plain http only to a loopback address)`);
  }
  return d as DiscoveryDocument;
}

/** The discovery document of one issuer, fetched once it is needed and kept; a failure is retried at most once per cooldown. */
export class Discovery {
  private doc: DiscoveryDocument | undefined;
  private pending: Promise<DiscoveryDocument> | undefined;
  private lastFailure: { at: number; error: IssuerFetchError } | undefined;

  constructor(
    private readonly issuer: string,
    private readonly opts: { timeoutMs: number; cooldownMs: number; now?: () => number },
  ) {}

  async get(): Promise<DiscoveryDocument> {
    if (this.doc) return this.doc;
    if (this.pending) return this.pending;
    const now = (this.opts.now ?? Date.now)();
    if (this.lastFailure && now - this.lastFailure.at < this.opts.cooldownMs) throw this.lastFailure.error;
    this.pending = fetchDiscovery(this.issuer, this.opts).then(
      (doc) => (this.doc = doc),
      (e: unknown) => {
        const error = e instanceof IssuerFetchError ? e : new IssuerFetchError(String(e));
        this.lastFailure = { at: now, error };
        throw error;
      },
    ).finally(() => (this.pending = undefined));
    return this.pending;
  }
}
