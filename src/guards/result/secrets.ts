import { secretMatcher } from '../../audit/secrets.js';
import { resolveOverlaps, scanOf, type Hit } from './text.js';
import type { ScanContext, TextGuard, TextScan } from './types.js';

export type SecretsAction = 'redact' | 'flag' | 'refuse';

export const SECRET_PLACEHOLDER = '[REDACTED:secret]';

/**
 * A credential shape. Every pattern starts with a literal (the engine jumps between its
 * occurrences) and every quantifier is bounded, none nested: the cost of one start is bounded by
 * the pattern's longest match, so a scan is linear in the text. `group` is the part that is the
 * secret (a `Bearer ` prefix stays); `check` rejects look-alikes.
 */
export interface Shape {
  readonly name: string;
  readonly re: RegExp;
  readonly group?: number;
  readonly check?: (secret: string, text: string, start: number) => boolean;
}

const hasDigit = /[0-9]/;
const hasUpper = /[A-Z]/;
const hasLower = /[a-z]/;
/** A random token mixes digits and both cases; prose and identifiers (`sk-learn-pipeline-step`) do not. */
const mixed = (s: string): boolean => hasDigit.test(s) && hasUpper.test(s) && hasLower.test(s);
/** Values in documentation and templates: `${VAR}`, `<password>`, `xxxx`, `changeme`, `authpassword`. */
const PLACEHOLDER = /^(?:\$\{|<|\{\{|%|\*)|x{3,}|\.\.\.|your|example|changeme|passw|secret|redacted|dummy|sample|placeholder/i;

/** A JWT's header is base64url of a JSON object naming its algorithm. */
function jwtHeader(token: string): boolean {
  const dot = token.indexOf('.');
  try {
    const header: unknown = JSON.parse(Buffer.from(token.slice(0, dot), 'base64url').toString('utf8'));
    return typeof header === 'object' && header !== null && typeof (header as { alg?: unknown }).alg === 'string';
  } catch {
    return false;
  }
}

/** Basic credentials decode to printable `user:password`. */
function basicCredentials(value: string): boolean {
  const text = Buffer.from(value, 'base64').toString('utf8');
  return /^[\x20-\x7e]{1,200}:[\x20-\x7e]{1,200}$/.test(text);
}

const NAMES = ['password', 'passwd', 'pwd', 'secret', 'client_secret', 'clientSecret', 'api_key', 'apikey', 'apiKey', 'access_token', 'accessToken', 'auth_token', 'authToken', 'private_key', 'privateKey'];
const ASSIGNED_NAMES = [...new Set(NAMES.flatMap((n) => [n, n[0]!.toUpperCase() + n.slice(1), n.toUpperCase()]))].sort((a, b) => b.length - a.length).join('|');

export const SHAPES: readonly Shape[] = [
  { name: 'aws-access-key-id', re: /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g },
  {
    name: 'aws-secret-access-key',
    re: /(?:aws_secret_access_key|AWS_SECRET_ACCESS_KEY|aws_secret_key|AWS_SECRET_KEY|secret_access_key|SECRET_ACCESS_KEY|SecretAccessKey|secretAccessKey|AwsSecretKey|awsSecretKey)["']?[ \t]{0,5}[:=][ \t]{0,5}["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/g,
    group: 1,
    check: (s) => hasDigit.test(s) || s.includes('/') || s.includes('+'),
  },
  { name: 'google-api-key', re: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  { name: 'google-oauth-client-secret', re: /\bGOCSPX-[0-9A-Za-z_-]{28}(?![0-9A-Za-z_-])/g },
  { name: 'google-oauth-access-token', re: /\bya29\.[0-9A-Za-z_-]{20,2048}/g, check: mixed },
  { name: 'github-token', re: /\bgh[pousr]_[A-Za-z0-9]{36,251}\b/g },
  { name: 'github-fine-grained-pat', re: /\bgithub_pat_[A-Za-z0-9_]{22,255}\b/g },
  { name: 'gitlab-token', re: /\bglpat-[A-Za-z0-9_-]{20,64}(?![A-Za-z0-9_-])/g },
  { name: 'slack-token', re: /\bxox[abposr]-[A-Za-z0-9-]{10,250}(?![A-Za-z0-9-])/g, check: (s) => hasDigit.test(s) },
  { name: 'slack-webhook', re: /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/_-]{20,120}/g },
  { name: 'stripe-key', re: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,247}\b/g },
  { name: 'stripe-webhook-secret', re: /\bwhsec_[A-Za-z0-9]{24,64}\b/g },
  // sk-ant- before sk-: an Anthropic key also has the OpenAI shape; the first (longest at a start) wins.
  { name: 'anthropic-key', re: /\bsk-(?<![\w-]sk-)ant-[A-Za-z0-9_-]{20,250}(?![A-Za-z0-9_-])/g },
  { name: 'openai-key', re: /\bsk-(?<![\w-]sk-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,250}(?![A-Za-z0-9_-])/g, check: (s) => mixed(s.slice(3)) },
  { name: 'npm-token', re: /\bnpm_[A-Za-z0-9]{36}\b/g },
  { name: 'pypi-token', re: /\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,300}/g },
  { name: 'huggingface-token', re: /\bhf_[A-Za-z0-9]{34,40}\b/g, check: mixed },
  { name: 'sendgrid-key', re: /\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g },
  // `<bot id>:AA…`: found by its `:AA` (a leading digit class would be tried at every digit), the id checked behind it.
  { name: 'telegram-bot-token', re: /:(AA[A-Za-z0-9_-]{33})(?![A-Za-z0-9_-])/g, group: 1, check: (_, text, start) => /(?:^|[^0-9A-Za-z])[0-9]{8,10}:$/.test(text.slice(Math.max(0, start - 12), start)) },
  { name: 'azure-storage-key', re: /AccountKey=([A-Za-z0-9+/]{86}==)/g, group: 1 },
  { name: 'jwt', re: /\beyJ[A-Za-z0-9_-]{8,2048}\.[A-Za-z0-9_-]{2,16384}\.[A-Za-z0-9_-]{0,2048}(?![A-Za-z0-9_-])/g, check: jwtHeader },
  { name: 'bearer', re: /\b[Bb]earer[ \t]{1,5}([A-Za-z0-9._~+/-]{16,4096}=*)/g, group: 1, check: (s) => hasDigit.test(s) && /[A-Za-z]/.test(s) },
  { name: 'basic-auth', re: /\bBasic[ \t]{1,5}([A-Za-z0-9+/]{8,4096}={0,2})(?![A-Za-z0-9+/=])/g, group: 1, check: basicCredentials },
  {
    name: 'url-password',
    re: /:\/\/[^\s/:@'"<>]{1,128}:([^\s/@'"<>]{3,256})@(?=[A-Za-z0-9[])/g,
    group: 1,
    check: (s) => !PLACEHOLDER.test(s) && !/^[0-9]{1,5}$/.test(s),
  },
  {
    // `password = "…"`, `"client_secret": "…"`: only values that look random, never placeholders.
    // Case-sensitive, in the three cases names are written in (an ignore-case alternation is slower).
    name: 'assigned-secret',
    re: new RegExp(String.raw`\b(?:${ASSIGNED_NAMES})["']?[ \t]{0,3}[:=][ \t]{0,3}["']?([^\s"'\`&,;<>]{10,200})`, 'g'),
    group: 1,
    check: (s) => hasDigit.test(s) && /[A-Za-z]/.test(s) && !PLACEHOLDER.test(s) && !s.includes('(') && !s.startsWith('-----BEGIN'),
  },
];

/** `source` with its capturing groups made non-capturing (escapes and character classes left alone). */
function nonCapturing(source: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      out += c + (source[i + 1] ?? '');
      i++;
    } else if (inClass) {
      if (c === ']') inClass = false;
      out += c;
    } else if (c === '[') {
      inClass = true;
      out += c;
    } else if (c === '(' && source[i + 1] !== '?') out += '(?:';
    else out += c;
  }
  return out;
}

const ONE_PASS = new RegExp(SHAPES.map((s) => `(${nonCapturing(s.re.source)})`).join('|'), 'g');
const ANCHORED = SHAPES.map((s) => new RegExp(s.re.source, 'y'));

const PEM_BEGIN = /-----BEGIN ([A-Z0-9 ]{0,40}?)PRIVATE KEY( BLOCK)?-----/g;

/**
 * PEM private-key blocks, found by their markers (no pattern spans the body): from BEGIN to the
 * matching END, or to the end of the text when the block is cut short (half a key is still a key).
 */
function pemBlocks(text: string, hits: Hit[]): void {
  if (!text.includes('PRIVATE KEY')) return;
  PEM_BEGIN.lastIndex = 0;
  for (let m = PEM_BEGIN.exec(text); m !== null; m = PEM_BEGIN.exec(text)) {
    const close = `-----END ${m[1] ?? ''}PRIVATE KEY${m[2] ?? ''}-----`;
    const end = text.indexOf(close, m.index + m[0].length);
    const stop = end < 0 ? text.length : end + close.length;
    hits.push({ start: m.index, end: stop, kind: 'secret' });
    if (end < 0) return;
    PEM_BEGIN.lastIndex = stop;
  }
}

/** `\u0041`-style escapes of printable ASCII, as JSON (and JavaScript) text may write any character. */
const ASCII_ESCAPE = /\\u00([2-7][0-9a-fA-F])/g;

/**
 * Secrets written with JSON escapes (`\u0041KIA…`: a model reading JSON text decodes them): the
 * text with those escapes decoded, searched, and each hit mapped back to the escaped original.
 */
function escapedSecrets(text: string, ctx: ScanContext): Hit[] {
  if (!text.includes('\\u00')) return [];
  let view = '';
  const at: number[] = []; // at[i]: where view[i] starts in text
  let pos = 0;
  ASCII_ESCAPE.lastIndex = 0;
  for (let m = ASCII_ESCAPE.exec(text); m !== null; m = ASCII_ESCAPE.exec(text)) {
    const code = parseInt(m[1] ?? '', 16);
    if (code < 0x20 || code > 0x7e) continue;
    for (let i = pos; i < m.index; i++) at.push(i);
    view += text.slice(pos, m.index) + String.fromCharCode(code);
    at.push(m.index);
    pos = m.index + m[0].length;
  }
  if (pos === 0) return [];
  for (let i = pos; i < text.length; i++) at.push(i);
  view += text.slice(pos);
  at.push(text.length);
  return findDirect(view, ctx).map((h) => ({ ...h, start: at[h.start] ?? 0, end: at[h.end] ?? text.length }));
}

export function findSecrets(text: string, ctx: ScanContext): Hit[] {
  return resolveOverlaps([...findDirect(text, ctx), ...escapedSecrets(text, ctx)]);
}

function findDirect(text: string, ctx: ScanContext): Hit[] {
  const hits: Hit[] = [];
  const own = secretMatcher(ctx.secrets);
  if (!own.empty) for (const [start, end] of own.ranges(text)) hits.push({ start, end, kind: 'secret' });
  {
    // One pass of one alternation finds every candidate (what it matched says which shape); the
    // shape's own expression, anchored there, gives the secret's part. One scan instead of one per
    // shape: the engine tests each position against the alternatives' first characters at once.
    ONE_PASS.lastIndex = 0;
    for (let m = ONE_PASS.exec(text); m !== null; m = ONE_PASS.exec(text)) {
      const i = m.findIndex((g, k) => k > 0 && g !== undefined) - 1;
      const shape = SHAPES[i];
      const anchored = ANCHORED[i];
      if (shape === undefined || anchored === undefined) continue;
      anchored.lastIndex = m.index;
      const a = anchored.exec(text);
      const value = a?.[shape.group ?? 0] ?? '';
      const start = m.index + (shape.group === undefined ? 0 : (a?.[0] ?? '').lastIndexOf(value));
      if (a === null || (shape.check && !shape.check(value, text, start))) {
        ONE_PASS.lastIndex = m.index + 1; // another shape may start here or inside
        continue;
      }
      hits.push({ start, end: start + value.length, kind: 'secret' });
    }
    pemBlocks(text, hits);
  }
  return resolveOverlaps(hits);
}

/** The gateway's own secret values and well-known credential shapes; `redact` puts `[REDACTED:secret]` in their place. */
export function scanSecrets(text: string, ctx: ScanContext, action: SecretsAction): TextScan {
  const hits = findSecrets(text, ctx).map((h) => ({ ...h, replacement: SECRET_PLACEHOLDER }));
  return scanOf(text, hits, action, action === 'redact');
}

export const secretsGuard = (action: SecretsAction): TextGuard => ({
  name: 'secrets',
  scan: (text, ctx) => scanSecrets(text, ctx, action),
});
