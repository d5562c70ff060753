import { MAX_NESTING } from '../util/depth.js';
import { hasEscapes, unescapeMapped } from './unescape.js';

/**
 * Secret values (everything that came from `${env:NAME}`) and the forms they take in text an
 * upstream or a log line may carry: raw, URL-encoded, form-encoded, JSON-escaped and base64
 * (standard and URL-safe, padded or not, alone or inside a longer base64 string). The forms of a
 * set are computed once per version of the set and matched by one regular expression: an
 * alternation of escaped literals, linear in the text.
 */

export const REDACTED = '[REDACTED]';

/** Values shorter than this are not secrets: "1" or "true" would mask ordinary text. */
export const MIN_SECRET_LENGTH = 6;

/** A base64 core shorter than this is not matched (it would hit ordinary base64 by chance). */
const MIN_CORE_LENGTH = 6;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const PRINTABLE = /^[\x20-\x7e]+$/;
const REGEX_META = /[.*+?^${}()|[\]\\]/g;

/** One pattern of escaped literals (an alternation, linear in the text). */
function alternation(literals: readonly string[]): RegExp | undefined {
  return literals.length === 0 ? undefined : new RegExp(literals.map((f) => f.replace(REGEX_META, '\\$&')).join('|'), 'g');
}

/**
 * The live set of secrets: a Set that counts its changes, so matchers built from it know when
 * to rebuild (tool files loaded on a reload add their values).
 */
export class SecretSet extends Set<string> {
  version = 0;

  constructor(values?: Iterable<string>) {
    super();
    for (const v of values ?? []) this.add(v);
  }

  override add(value: string): this {
    if (!this.has(value)) this.version++;
    return super.add(value);
  }

  override delete(value: string): boolean {
    const gone = super.delete(value);
    if (gone) this.version++;
    return gone;
  }

  override clear(): void {
    if (this.size > 0) this.version++;
    super.clear();
  }
}

/** Masks every known form of every secret in a string, with one precompiled pattern. */
export class SecretMatcher {
  static readonly NONE = new SecretMatcher([]);
  private readonly pattern: RegExp | undefined;
  /** The secrets' own texts (with a character an encoder escapes), searched in unescaped text. */
  private readonly escapable: RegExp | undefined;
  /** The forms matched, longest first (for tests and diagnostics). */
  readonly forms: readonly string[];
  private readonly longestBytes: number;
  private readonly longestChars: number;

  constructor(secrets: Iterable<string>) {
    const forms = new Set<string>();
    const texts = new Set<string>();
    for (const s of secrets) {
      if (s.length < MIN_SECRET_LENGTH) continue;
      for (const f of secretForms(s)) forms.add(f);
      for (const t of [s, ...decodedForms(s)]) if (/[^A-Za-z0-9]/.test(t)) texts.add(t);
    }
    // Longest first: where a full form and its own prefix (a base64 core) both match, the full one wins.
    this.forms = [...forms].sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
    const plain = [...texts].sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
    // An escaped form is at most 9 characters per UTF-16 unit (%XX%XX%XX), all ASCII.
    const escapedChars = plain.reduce((n, t) => Math.max(n, t.length * 9), 0);
    this.longestBytes = Math.max(escapedChars, this.forms.reduce((n, f) => Math.max(n, Buffer.byteLength(f)), 0));
    this.longestChars = Math.max(escapedChars, this.forms[0]?.length ?? 0);
    this.pattern = alternation(this.forms);
    this.escapable = alternation(plain);
  }

  get empty(): boolean {
    return this.pattern === undefined;
  }

  mask(text: string): string {
    return this.render(text, text.length);
  }

  /**
   * Where secrets are in `text`, merged and in order: their literal forms, and (when the text has
   * escapes) the secret's text with its characters escaped in any mix (see unescape.ts).
   */
  ranges(text: string): [number, number][] {
    const found: [number, number][] = [];
    const re = this.pattern;
    if (re === undefined) return found;
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) found.push([m.index, m.index + m[0].length]);
    const esc = this.escapable;
    if (esc !== undefined && hasEscapes(text)) {
      const u = unescapeMapped(text);
      esc.lastIndex = 0;
      for (let m = esc.exec(u.text); m !== null; m = esc.exec(u.text)) {
        found.push([u.span(m.index)[0], u.span(m.index + m[0].length - 1)[1]]);
      }
      found.sort((a, b) => a[0] - b[0]);
    }
    const merged: [number, number][] = [];
    for (const r of found) {
      const last = merged.at(-1);
      if (last && r[0] < last[1]) last[1] = Math.max(last[1], r[1]);
      else merged.push(r);
    }
    return merged;
  }

  /** `text` masked, up to `end` (a secret that starts before `end` is masked whole). */
  private render(text: string, end: number): string {
    let out = '';
    let pos = 0;
    for (const [a, b] of this.ranges(text)) {
      if (a >= end) break;
      out += text.slice(pos, a) + REDACTED;
      pos = b;
    }
    return pos < end ? out + text.slice(pos, end) : out;
  }

  /**
   * `value` with every string masked, copied only where something changed (the same object
   * when nothing did). Callers bound the nesting first; past MAX_NESTING a value is replaced whole.
   */
  maskDeep<T>(value: T, depth = 0): T {
    if (typeof value === 'string') return this.mask(value) as T;
    if (value === null || typeof value !== 'object' || this.pattern === undefined) return value;
    if (depth >= MAX_NESTING) return REDACTED as T;
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const v: unknown = value[i];
        const m = this.maskDeep(v, depth + 1);
        if (m !== v) (copy ??= value.slice())[i] = m;
      }
      return (copy ?? value) as T;
    }
    let copy: Record<string, unknown> | undefined;
    const obj = value as Record<string, unknown>;
    for (const k of Object.keys(obj)) {
      const v = obj[k];
      const m = this.maskDeep(v, depth + 1);
      if (m !== v) (copy ??= { ...obj })[k] = m;
    }
    return (copy ?? value) as T;
  }

  /**
   * Masks first, then cuts to `maxBytes` of UTF-8 (whole characters) with `…` when cut: no
   * prefix of a secret survives the cut. Only the start of a long text is decoded and masked:
   * a window is read up to a safe end (every form starting before it ends inside the window),
   * widened while the masked part is still short of the cut.
   */
  cut(text: string | Buffer, maxBytes: number): string {
    const bytes = typeof text === 'string' ? Buffer.from(text) : text;
    let size = maxBytes + this.longestBytes + 4;
    for (;;) {
      const whole = size >= bytes.length;
      const masked = whole ? this.mask(bytes.toString('utf8')) : this.maskUntil(bytes.subarray(0, size).toString('utf8'));
      if (whole || Buffer.byteLength(masked) > maxBytes) return cutUtf8(masked, maxBytes);
      size *= 2;
    }
  }

  /** The masked text up to its safe end (the window's length less the longest form): a form starting before it lies whole in the window. */
  private maskUntil(window: string): string {
    return this.render(window, Math.max(0, window.length - this.longestChars));
  }
}

/** `text` cut to `maxBytes` of UTF-8 at a character boundary, with `…` when cut. */
function cutUtf8(text: string, maxBytes: number): string {
  if (text.length <= maxBytes / 3) return text;
  const buf = Buffer.from(text);
  if (buf.length <= maxBytes) return text;
  let end = maxBytes;
  while (end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80) end--;
  return `${buf.subarray(0, end).toString('utf8')}…`;
}

const matchers = new WeakMap<ReadonlySet<string>, { version: number; matcher: SecretMatcher }>();

/**
 * The matcher of a set, built once per version of it: a SecretSet counts its changes; any other
 * set is taken as changed when its size changes.
 */
export function secretMatcher(secrets: ReadonlySet<string>): SecretMatcher {
  if (secrets.size === 0) return SecretMatcher.NONE;
  const version = secrets instanceof SecretSet ? secrets.version : secrets.size;
  const known = matchers.get(secrets);
  if (known?.version === version) return known.matcher;
  const matcher = new SecretMatcher(secrets);
  matchers.set(secrets, { version, matcher });
  return matcher;
}

/**
 * Every form of one secret worth matching. Base64 of the secret inside a longer value (the
 * `user:secret` of Basic auth, a token's payload) depends on where the secret starts modulo 3:
 * for each of the three alignments, the characters fully determined by the secret's bytes are a
 * fixed string (the "core"); matching it masks all but at most one character at either end,
 * which carries 2 or 4 bits of the secret's first or last byte.
 */
export function secretForms(secret: string): string[] {
  const forms = new Set<string>([secret]);
  const uri = encoded(encodeURIComponent, secret);
  forms.add(uri);
  forms.add(uri.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
  forms.add(uri.replace(/%20/g, '+'));
  forms.add(new URLSearchParams([['', secret]]).toString().slice(1)); // application/x-www-form-urlencoded
  forms.add(encoded(encodeURI, secret));
  forms.add(JSON.stringify(secret).slice(1, -1));
  const bytes = Buffer.from(secret, 'utf8');
  const b64 = bytes.toString('base64');
  forms.add(b64);
  forms.add(b64.replace(/=+$/, ''));
  const url = bytes.toString('base64url');
  forms.add(url);
  forms.add(url + '='.repeat((4 - (url.length % 4)) % 4));
  for (let align = 0; align < 3; align++) {
    const core = base64Core(bytes, align);
    if (core.length >= MIN_CORE_LENGTH) {
      forms.add(core);
      forms.add(core.replace(/\+/g, '-').replace(/\//g, '_'));
    }
  }
  for (const decoded of decodedForms(secret)) forms.add(decoded);
  return [...forms].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

/** `encode(s)`, or `s` when it holds a lone surrogate (which the URI encoders refuse). */
function encoded(encode: (s: string) => string, s: string): string {
  try {
    return encode(s);
  } catch {
    return s;
  }
}

/** The base64 characters that depend only on `bytes` when they start at byte `align` (0–2) of a 3-byte group. */
function base64Core(bytes: Buffer, align: number): string {
  const encoded = Buffer.concat([Buffer.alloc(align), bytes]).toString('base64').replace(/=+$/, '');
  const firstBit = align * 8;
  const endBit = firstBit + bytes.length * 8;
  return encoded.slice(Math.ceil(firstBit / 6), Math.floor(endBit / 6));
}

/**
 * A secret that is itself base64 (`Basic ${env:CREDS}`) may come back decoded: its text (when
 * printable) is a form too, and for `user:password` the password alone.
 */
function decodedForms(secret: string): string[] {
  const std = BASE64.test(secret) && secret.length % 4 === 0;
  if (!std && !BASE64URL.test(secret)) return [];
  const text = Buffer.from(secret, std ? 'base64' : 'base64url').toString('utf8');
  if (text.length < MIN_SECRET_LENGTH || !PRINTABLE.test(text)) return [];
  const colon = text.indexOf(':');
  return colon > 0 && text.length - colon - 1 >= MIN_SECRET_LENGTH ? [text, text.slice(colon + 1)] : [text];
}
