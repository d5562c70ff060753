import { insecureUrl } from '../../auth/oidc/fetch-json.js';
import { fetchCause, readCapped } from '../../util/fetch-body.js';

/** Bounds of one fetch of a `url:` document. */
export interface DocumentFetchOptions {
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Validators of the cached copy: a 304 answers `unchanged`. */
  readonly etag?: string | undefined;
  readonly lastModified?: string | undefined;
}

export type DocumentFetch =
  | { readonly ok: true; readonly text: string; readonly etag?: string | undefined; readonly lastModified?: string | undefined }
  | { readonly ok: true; readonly unchanged: true }
  | { readonly ok: false; readonly error: string };

export const DEFAULT_FETCH_TIMEOUT_MS = 10_000;
/** A 1,000-operation document is 1-5 MB; four times the largest public ones seen. */
export const MAX_DOCUMENT_BYTES = 20 * 1024 * 1024;
const MAX_REDIRECTS = 3;

/**
 * Why a document URL cannot be fetched with these headers: plain http carries them in clear, so
 * with headers (the file's secrets) only loopback may be plain http. A document without headers
 * may come over plain http (an in-cluster service), its changes being held by the pins anyway.
 */
export function documentUrlProblem(url: string, withHeaders: boolean): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `'${url}' is not a URL`;
  }
  if (u.username || u.password) return 'credentials in the URL are not sent: put them in headers as ${env:NAME}';
  if (withHeaders && insecureUrl(u)) return 'headers (secrets) are sent only over https, or plain http to a loopback address';
  return undefined;
}

/**
 * GETs an OpenAPI document: bounded in time (connect to last byte) and size, redirects followed
 * only within the same origin (the headers must not go to another host), and a page of HTML (a
 * login or error page) is an error, not a document.
 */
export async function fetchDocument(url: string, opts: DocumentFetchOptions): Promise<DocumentFetch> {
  const signal = AbortSignal.timeout(opts.timeoutMs);
  const origin = new URL(url).origin;
  const headers: Record<string, string> = { accept: 'application/json, application/yaml, application/x-yaml, text/yaml;q=0.9, */*;q=0.1', ...opts.headers };
  if (opts.etag) headers['if-none-match'] = opts.etag;
  if (opts.lastModified) headers['if-modified-since'] = opts.lastModified;
  let at = url;
  try {
    for (let hop = 0; ; hop++) {
      const res = await fetch(at, { headers, signal, redirect: 'manual' });
      if (res.status >= 300 && res.status < 400 && res.status !== 304) {
        await res.body?.cancel().catch(() => undefined);
        const next = res.headers.get('location');
        if (!next) return { ok: false, error: `answered HTTP ${res.status} without a Location` };
        const to = new URL(next, at);
        if (to.origin !== origin) return { ok: false, error: `redirected to another origin (${to.origin}), which is not followed: the file's headers would go there` };
        if (hop >= MAX_REDIRECTS) return { ok: false, error: `more than ${MAX_REDIRECTS} redirects` };
        at = to.href;
        continue;
      }
      return await answer(res, opts);
    }
  } catch (e) {
    return { ok: false, error: signal.aborted ? `no complete answer within ${opts.timeoutMs} ms` : `cannot fetch (${fetchCause(e)})` };
  }
}

async function answer(res: Response, opts: DocumentFetchOptions): Promise<DocumentFetch> {
  if (res.status === 304) {
    await res.body?.cancel().catch(() => undefined);
    return { ok: true, unchanged: true };
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    return { ok: false, error: `answered HTTP ${res.status}` };
  }
  const type = (res.headers.get('content-type') ?? '').toLowerCase();
  if (type.includes('text/html')) {
    await res.body?.cancel().catch(() => undefined);
    return { ok: false, error: 'answered an HTML page (a login or error page?), not an OpenAPI document' };
  }
  if (Number(res.headers.get('content-length') ?? '0') > opts.maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    return { ok: false, error: `the document is larger than ${opts.maxBytes} bytes` };
  }
  const text = await readCapped(res, opts.maxBytes);
  if (text === undefined) return { ok: false, error: `the document is larger than ${opts.maxBytes} bytes` };
  // Served as text/plain or with no type at all, HTML still is not a document.
  if (/^\s*(<!doctype html|<html)/i.test(text)) return { ok: false, error: 'answered an HTML page (a login or error page?), not an OpenAPI document' };
  return { ok: true, text, etag: res.headers.get('etag') ?? undefined, lastModified: res.headers.get('last-modified') ?? undefined };
}
