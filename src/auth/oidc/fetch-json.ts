import { fetchCause, readCapped } from '../../util/fetch-body.js';

/** A failure of an issuer's endpoint (discovery, JWKS, introspection): why, in words, never with a token. */
export class IssuerFetchError extends Error {
  override readonly name = 'IssuerFetchError';
}

export interface FetchJsonOptions {
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly init?: RequestInit;
  /** 'manual': a 3xx is a failure (a POST carrying a token and a client secret follows no redirect). Default 'follow'. */
  readonly redirect?: 'follow' | 'manual';
}

const LOOPBACK = /^(localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\])$/;

/** Plain http to anything but loopback: keys or answers fetched over it could be swapped on the way. */
export function insecureUrl(u: URL): boolean {
  return u.protocol !== 'https:' && !(u.protocol === 'http:' && LOOPBACK.test(u.hostname));
}

/**
 * GETs (or, with `init`, POSTs) a JSON document from an issuer, bounded in time and size: a hanging
 * or huge answer is an error, not a stuck or swollen gateway.
 */
export async function fetchJson(url: string, opts: FetchJsonOptions): Promise<unknown> {
  const signal = AbortSignal.timeout(opts.timeoutMs);
  let res: Response;
  try {
    res = await fetch(url, { ...opts.init, signal, redirect: opts.redirect ?? 'follow', headers: { accept: 'application/json', ...opts.init?.headers } });
  } catch (e) {
    throw new IssuerFetchError(signal.aborted ? `no answer within ${opts.timeoutMs} ms` : `cannot connect (${fetchCause(e)})`);
  }
  try {
    if (res.status >= 300 && res.status < 400) throw new IssuerFetchError(`answered a redirect (HTTP ${res.status}), which is not followed`);
    // A redirect followed from https down to plain http would let anyone on the path answer.
    if (res.redirected && insecureUrl(new URL(res.url))) throw new IssuerFetchError('redirected to plain http, which is not followed');
    if (!res.ok) throw new IssuerFetchError(`answered HTTP ${res.status}`);
    const declared = Number(res.headers.get('content-length') ?? '0');
    if (declared > opts.maxBytes) throw new IssuerFetchError(`answer larger than ${opts.maxBytes} bytes`);
    const text = await readCapped(res, opts.maxBytes);
    if (text === undefined) throw new IssuerFetchError(`answer larger than ${opts.maxBytes} bytes`);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new IssuerFetchError('answered something that is not JSON');
    }
  } catch (e) {
    await res.body?.cancel().catch(() => undefined);
    if (e instanceof IssuerFetchError) throw e;
    throw new IssuerFetchError(signal.aborted ? `no answer within ${opts.timeoutMs} ms` : `failed while reading (${fetchCause(e)})`);
  }
}
