import { realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { canonicalJson, sha256Hex } from '../../util/hash.js';
import { DEFAULT_FETCH_TIMEOUT_MS, MAX_DOCUMENT_BYTES, documentUrlProblem, fetchDocument } from './fetch-document.js';
import type { OpenApiFile } from './file-schema.js';

/** The text of a file's document, where it came from, and its hash; or why there is none. */
export type DocumentText =
  | { readonly ok: true; readonly text: string; readonly hash: string; readonly source: string; readonly path?: string }
  | { readonly ok: false; readonly at: '/spec' | '/url'; readonly message: string };

/** The cached copy of a `url:` document. */
export interface UrlCache {
  readonly key: string;
  text: string;
  hash: string;
  etag?: string | undefined;
  lastModified?: string | undefined;
  fetchedAt: number;
  /** The file (expanded) it was fetched for: an edited file fetches anew. */
  specHash: string;
}

/** A reload soon after a fetch (a burst of reloads: a watcher burst, MCP imports) uses the copy. */
const REFETCH_AFTER_MS = 1000;

const inside = (root: string, p: string) => {
  const rel = relative(root, p);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
};

/**
 * `spec:` resolved against the file's directory, refused when it leaves tools.d (lexically or
 * through a symlink): a tool file must not make the gateway read (and report lines of) any file
 * it can reach, and tools.d is the one tree the watcher and a reviewer see.
 */
export function specPath(toolsDir: string, file: string, spec: string): { path: string } | { message: string } {
  const path = resolve(dirname(file), spec);
  const root = resolve(toolsDir);
  if (!inside(root, path)) return { message: `spec '${spec}' is outside the tools directory: put the document in tools.d or a subfolder of it` };
  try {
    const real = realpathSync(path);
    if (!inside(realpathSync(root), real)) return { message: `spec '${spec}' leads (through a symlink) outside the tools directory` };
  } catch {
    // missing: reported when read
  }
  return { path };
}

export interface SourceOptions {
  readonly toolsDir: string;
  readonly file: string;
  readonly cache: UrlCache | undefined;
  /** Fetch even when the copy is fresh (refresh timer). */
  readonly force?: boolean;
  readonly maxBytes?: number;
}

/** Reads `spec:` or fetches `url:` (conditionally, with the cached copy's validators). */
export async function documentText(spec: OpenApiFile, opts: SourceOptions): Promise<{ doc: DocumentText; cache?: UrlCache }> {
  const maxBytes = opts.maxBytes ?? MAX_DOCUMENT_BYTES;
  if ('spec' in spec) {
    const at = specPath(opts.toolsDir, opts.file, spec.spec);
    if ('message' in at) return { doc: { ok: false, at: '/spec', message: at.message } };
    try {
      const buf = await readFile(at.path);
      if (buf.byteLength > maxBytes) return { doc: { ok: false, at: '/spec', message: `the document is larger than ${maxBytes} bytes` } };
      const text = buf.toString('utf8');
      return { doc: { ok: true, text, hash: sha256Hex(text), source: at.path, path: at.path } };
    } catch (e) {
      const code = (e as { code?: string }).code;
      return { doc: { ok: false, at: '/spec', message: code === 'ENOENT' ? `spec '${spec.spec}' does not exist (${at.path})` : `cannot read spec '${spec.spec}': ${(e as Error).message}` } };
    }
  }
  const headers = spec.headers ?? {};
  const bad = documentUrlProblem(spec.url, Object.keys(headers).length > 0);
  if (bad) return { doc: { ok: false, at: '/url', message: bad } };
  const key = sha256Hex(JSON.stringify([spec.url, headers]));
  const specHash = sha256Hex(canonicalJson(spec));
  const cached = opts.cache?.key === key ? opts.cache : undefined;
  if (cached && !opts.force && cached.specHash === specHash && Date.now() - cached.fetchedAt < REFETCH_AFTER_MS) return { doc: { ok: true, text: cached.text, hash: cached.hash, source: spec.url }, cache: cached };
  const got = await fetchDocument(spec.url, { timeoutMs: spec.fetchTimeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS, maxBytes, headers, etag: cached?.etag, lastModified: cached?.lastModified });
  if (!got.ok) return { doc: { ok: false, at: '/url', message: `cannot fetch the document: ${got.error}` }, ...(cached ? { cache: cached } : {}) };
  if ('unchanged' in got) {
    if (!cached) return { doc: { ok: false, at: '/url', message: 'cannot fetch the document: answered 304 Not Modified to a request without validators' } };
    cached.fetchedAt = Date.now();
    cached.specHash = specHash;
    return { doc: { ok: true, text: cached.text, hash: cached.hash, source: spec.url }, cache: cached };
  }
  const cache: UrlCache = { key, text: got.text, hash: sha256Hex(got.text), etag: got.etag, lastModified: got.lastModified, fetchedAt: Date.now(), specHash };
  return { doc: { ok: true, text: cache.text, hash: cache.hash, source: spec.url }, cache };
}
