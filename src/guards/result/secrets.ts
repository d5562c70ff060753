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

export const SHAPES: readonly Shape[] = [
  { name: 'aws-access-key-id', re: /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g },
  {
    name: 'aws-secret-access-key',
    re: /(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)["']?[ \t]{0,5}[:=][ \t]{0,5}["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/gi,
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
    name: 'assigned-secret',
    re: /\b(?:password|passwd|pwd|secret|client_?secret|api_?key|apikey|access_?token|auth_?token|private_?key)["']?[ \t]{0,3}[:=][ \t]{0,3}["']?([^\s"'`&,;<>]{10,200})/gi,
    group: 1,
    check: (s) => hasDigit.test(s) && /[A-Za-z]/.test(s) && !PLACEHOLDER.test(s) && !s.includes('(') && !s.startsWith('-----BEGIN'),
  },
];

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

export function findSecrets(text: string, ctx: ScanContext): Hit[] {
  const hits: Hit[] = [];
  const own = secretMatcher(ctx.secrets);
  if (!own.empty) for (const [start, end] of own.ranges(text)) hits.push({ start, end, kind: 'secret' });
  {
    // No pre-test: each shape starts with a literal the engine scans for, cheaper than one alternation of them all.
    for (const shape of SHAPES) {
      const re = shape.re;
      re.lastIndex = 0;
      for (let m = re.exec(text); m !== null; m = re.exec(text)) {
        const value = m[shape.group ?? 0] ?? '';
        const start = m.index + (shape.group === undefined ? 0 : m[0].lastIndexOf(value));
        if (shape.check && !shape.check(value, text, start)) continue;
        hits.push({ start, end: start + value.length, kind: 'secret' });
      }
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
