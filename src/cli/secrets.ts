import { toPointer } from '../util/source.js';

/**
 * Secrets written inline: a string under a secret-like name (Authorization, x-api-key, *token,
 * *password, a config key's `key`...) or a URL credential, whose value is a literal rather than
 * `${env:NAME}`. Runs on the file as written (before expansion). `{{arg}}` templates are not
 * literals: a value that is only templates and an auth scheme word is fine.
 */

export interface InlineSecret {
  /** JSON pointer of the value. */
  readonly path: string;
  /** What holds it; never the value itself. */
  readonly what: string;
}

const SECRET_SUFFIXES = ['authorization', 'apikey', 'token', 'secret', 'password', 'passwd', 'cookie', 'privatekey', 'accesskey', 'credentials'];
/** Subtrees holding schemas and prose for models, not settings. */
const SKIP = new Set(['inputSchema', 'outputSchema', 'examples', 'description', 'title', 'redact', 'tags']);
const SCHEME_WORDS = /^(bearer|basic|token|apikey|digest)$/i;

export function isSecretName(name: string): boolean {
  const n = name.toLowerCase().replace(/[-_.\s]/g, '');
  return n === 'key' || SECRET_SUFFIXES.some((s) => n.endsWith(s));
}

/** A literal: something left once `${env:...}` (the whole value is then fine), templates and scheme words are set aside. */
export function isLiteralSecret(value: string): boolean {
  if (/\$\{env:[A-Za-z0-9_]+:-[^}]/.test(value)) return true; // a default is written in the file
  if (value.includes('${env:')) return false;
  const rest = value.replace(/\{\{[^}]*\}\}/g, ' ').trim().split(/\s+/).filter((w) => w !== '' && !SCHEME_WORDS.test(w));
  return rest.length > 0;
}

/** Credentials in a URL: `user:password@` or a secret-like query parameter with a literal value. */
export function urlSecrets(url: string): string[] {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return [];
  const found: string[] = [];
  const auth = /^[a-z][a-z0-9+.-]*:\/\/([^/?#@\s]*)@/i.exec(url)?.[1];
  const password = auth !== undefined && auth.includes(':') ? auth.slice(auth.indexOf(':') + 1) : '';
  if (password !== '' && isLiteralSecret(password)) found.push('URL password');
  const query = url.split('#')[0]?.split('?')[1] ?? '';
  for (const pair of query.split('&')) {
    const [name = '', value = ''] = pair.split('=');
    if (value !== '' && isSecretName(name) && isLiteralSecret(value)) found.push(`URL query parameter '${name}'`);
  }
  return found;
}

export function findInlineSecrets(value: unknown, at: readonly (string | number)[] = []): InlineSecret[] {
  if (typeof value === 'string') {
    const name = at.length > 0 ? at[at.length - 1] : undefined;
    const out: InlineSecret[] = urlSecrets(value).map((what) => ({ path: toPointer(at), what }));
    if (typeof name === 'string' && isSecretName(name) && isLiteralSecret(value)) out.push({ path: toPointer(at), what: `'${name}'` });
    return out;
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => findInlineSecrets(v, [...at, i]));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => (SKIP.has(k) ? [] : findInlineSecrets(v, [...at, k])));
  }
  return [];
}
