import { PII_KINDS } from '../../tools/result-guards-schema.js';
import { resolveOverlaps, scanOf, type Hit } from './text.js';
import type { TextGuard, TextScan } from './types.js';

export type PiiKind = (typeof PII_KINDS)[number];
export type PiiAction = 'redact' | 'flag' | 'refuse';

/**
 * Personal data by shape and checksum. Every quantifier is bounded and none is nested (a repeated
 * group has a fixed separator or width, so it splits one way): linear in the text. Numbers are
 * confirmed by their check digits (Luhn, ISO 13616 mod-97, ISO 7064 MOD 11-2) to keep order
 * numbers, timestamps and hashes out.
 */

// --- e-mail -------------------------------------------------------------------------------------
/** The domain after an `@`; the local part is read backwards from it (so the engine scans for `@` only). */
const EMAIL_DOMAIN = /@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,8}[A-Za-z]{2,24}(?![A-Za-z0-9-])/g;
const LOCAL = /[A-Za-z0-9._%+-]/;
/** Image and asset names (`logo@2x.png`), not mailboxes; `git@` is an SSH remote. */
const NOT_TLD = new Set(['png', 'jpg', 'jpeg', 'gif', 'svg', 'webp', 'avif', 'ico', 'css', 'js', 'mjs', 'ts', 'map', 'json', 'woff', 'woff2', 'ttf']);

function emails(text: string, hits: Hit[]): void {
  if (!text.includes('@')) return;
  EMAIL_DOMAIN.lastIndex = 0;
  for (let m = EMAIL_DOMAIN.exec(text); m !== null; m = EMAIL_DOMAIN.exec(text)) {
    let start = m.index;
    while (start > 0 && m.index - start < 65 && LOCAL.test(text[start - 1] ?? '')) start--;
    if (start === m.index || m.index - start > 64 || (start > 0 && LOCAL.test(text[start - 1] ?? ''))) continue;
    while (start < m.index && !/[A-Za-z0-9]/.test(text[start] ?? '')) start++; // a local part starts with a letter or digit
    const tld = m[0].slice(m[0].lastIndexOf('.') + 1).toLowerCase();
    // `scheme://user@host` is a URL's user, not a mailbox.
    if (start === m.index || NOT_TLD.has(tld) || text.slice(start, m.index) === 'git' || text.slice(Math.max(0, start - 3), start) === '://') continue;
    hits.push({ start, end: m.index + m[0].length, kind: 'email' });
  }
}

// --- payment card -------------------------------------------------------------------------------
// Separators: a space, a no-break space (U+00A0, U+202F: French and other locales group digits with them) or a dash.
const CARD = /(?<![0-9A-Za-z.,_/-])[2-6][0-9]{3}(?:[ \u00A0\u202F-]?[0-9]){9,15}(?![0-9A-Za-z_]|[.,-][0-9])/g;

export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * Issuer ranges (first digits) and their lengths: Visa 4 (13, 16, 19), Mastercard 51–55 and
 * 2221–2720 (16), Amex 34/37 (15), Diners 30/36/38 (14–19), Discover 6011/65/644–649 (16–19), JCB
 * 3528–3589 (16–19), UnionPay 62 (16–19), Maestro 50/56–69 (12–19). A 13-digit barcode or an
 * order number of the wrong length for its first digits is not a card.
 */
function issuer(d: string): boolean {
  const n = d.length;
  const two = Number(d.slice(0, 2));
  const four = Number(d.slice(0, 4));
  if (d[0] === '4') return n === 13 || n === 16 || n === 19;
  if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return n === 16;
  if (two === 34 || two === 37) return n === 15;
  if (two === 30 || two === 36 || two === 38) return n >= 14;
  if (d.startsWith('6011') || two === 65 || (four >= 3528 && four <= 3589) || two === 62) return n >= 16;
  return (two === 50 || (two >= 56 && two <= 69)) && n >= 16;
}

/** Separators as cards are written: none, or one kind in groups of 4 (4-6-4 / 4-6-5 for Amex and Diners). */
function cardGrouping(raw: string): boolean {
  const groups = raw.split(/[ \u00A0\u202F-]/);
  if (groups.length === 1) return true;
  if (/[ \u00A0\u202F]/.test(raw) && raw.includes('-')) return false;
  const lens = groups.map((g) => g.length).join(',');
  return /^(?:4,)+[1-4]$|^(?:4,)*4$/.test(lens) || lens === '4,6,4' || lens === '4,6,5';
}

function cards(text: string, hits: Hit[]): void {
  CARD.lastIndex = 0;
  for (let m = CARD.exec(text); m !== null; m = CARD.exec(text)) {
    const digits = m[0].replace(/[ \u00A0\u202F-]/g, '');
    if (digits.length < 13 || digits.length > 19 || !issuer(digits) || !cardGrouping(m[0]) || /^(\d)\1+$/.test(digits) || !luhn(digits)) continue;
    hits.push({ start: m.index, end: m.index + m[0].length, kind: 'card' });
  }
}

// --- IBAN ---------------------------------------------------------------------------------------
/** ISO 13616 lengths by country (the SWIFT registry). */
const IBAN_LENGTH: Record<string, number> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BI: 27, BR: 29, BY: 28, CH: 21, CR: 22, CY: 28, CZ: 24,
  DE: 22, DJ: 27, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FK: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23, GL: 18, GR: 27,
  GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LC: 32, LI: 21, LT: 20, LU: 20,
  LV: 21, LY: 25, MC: 27, MD: 24, ME: 22, MK: 19, MN: 20, MR: 27, MT: 31, MU: 30, NI: 28, NL: 18, NO: 15, OM: 23, PK: 24, PL: 28,
  PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, RU: 33, SA: 24, SC: 31, SD: 18, SE: 24, SI: 19, SK: 24, SM: 27, SO: 23, ST: 25, SV: 28,
  TL: 23, TN: 24, TR: 26, UA: 29, VA: 22, VG: 24, XK: 20, YE: 30,
};
const IBAN = /(?<![A-Za-z0-9])[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])/g;

export function ibanValid(compact: string): boolean {
  if (IBAN_LENGTH[compact.slice(0, 2)] !== compact.length) return false;
  const moved = compact.slice(4) + compact.slice(0, 4);
  let rest = 0;
  for (let i = 0; i < moved.length; i++) {
    const c = moved.charCodeAt(i);
    const v = c >= 65 ? c - 55 : c - 48;
    rest = v >= 10 ? (rest * 100 + v) % 97 : (rest * 10 + v) % 97;
  }
  return rest === 1;
}

function ibans(text: string, hits: Hit[]): void {
  IBAN.lastIndex = 0;
  for (let m = IBAN.exec(text); m !== null; m = IBAN.exec(text)) {
    if (ibanValid(m[0].replace(/ /g, ''))) hits.push({ start: m.index, end: m.index + m[0].length, kind: 'iban' });
  }
}

// --- mainland China resident ID (GB 11643-1999) -------------------------------------------------
const CN_ID = /(?<![0-9A-Za-z])[1-9][0-9]{5}(?:19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])[0-9]{3}[0-9Xx](?![0-9A-Za-z])/g;
const PROVINCES = new Set([11, 12, 13, 14, 15, 21, 22, 23, 31, 32, 33, 34, 35, 36, 37, 41, 42, 43, 44, 45, 46, 50, 51, 52, 53, 54, 61, 62, 63, 64, 65, 71, 81, 82, 83, 91]);
const CN_WEIGHTS = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2];
const CN_CHECK = '10X98765432';

export function cnIdValid(id: string): boolean {
  if (!PROVINCES.has(Number(id.slice(0, 2)))) return false;
  const y = Number(id.slice(6, 10));
  const mo = Number(id.slice(10, 12));
  const d = Number(id.slice(12, 14));
  const date = new Date(Date.UTC(y, mo - 1, d));
  if (date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d || y < 1900 || date.getTime() > Date.now()) return false;
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += (id.charCodeAt(i) - 48) * (CN_WEIGHTS[i] ?? 0);
  return CN_CHECK[sum % 11] === id[17]?.toUpperCase();
}

function cnIds(text: string, hits: Hit[]): void {
  CN_ID.lastIndex = 0;
  for (let m = CN_ID.exec(text); m !== null; m = CN_ID.exec(text)) {
    if (cnIdValid(m[0])) hits.push({ start: m.index, end: m.index + m[0].length, kind: 'cn_id' });
  }
}

// --- phone --------------------------------------------------------------------------------------
/**
 * Conservative on purpose (numbers are everywhere in tool results): international numbers written
 * with `+` and 8–15 digits; North American `(555) 123-4567` / `555-123-4567` / `555.123.4567`;
 * Chinese mobiles `13812345678` / `138 1234 5678` / `138-1234-5678`; and French/UK-style national
 * numbers with a leading 0 in the usual groups. Bare digit runs of other shapes are not phones.
 */
const PHONE_END = String.raw`(?![0-9A-Za-z]|[.,:-][0-9])`;
const PHONES: readonly { re: RegExp; digits?: readonly [number, number] }[] = [
  // +CC then groups, each after a separator (so a run of digits splits one way), or compact.
  { re: new RegExp(String.raw`(?<![0-9A-Za-z+=&/_-])\+[1-9](?:[0-9]{6,14}|[0-9]{0,3}(?:[ .-]\(?[0-9]{1,5}\)?|\([0-9]{1,5}\)){1,6})` + PHONE_END, 'g'), digits: [8, 15] },
  { re: new RegExp(String.raw`(?<![0-9A-Za-z+=&/_.-])(?:\([2-9][0-9]{2}\) ?[2-9][0-9]{2}[-.]|[2-9][0-9]{2}([-.])[2-9][0-9]{2}\1)[0-9]{4}` + PHONE_END, 'g') },
  { re: new RegExp(String.raw`(?<![0-9A-Za-z+=&/_.-])1[3-9][0-9](?:[0-9]{8}|( |-)[0-9]{4}\1[0-9]{4})` + PHONE_END, 'g') },
  { re: new RegExp(String.raw`(?<![0-9A-Za-z+=&/_.:-])0[1-9]( |\.)[0-9]{2}(?:\1[0-9]{2}){3}` + PHONE_END, 'g') },
  { re: new RegExp(String.raw`(?<![0-9A-Za-z+=&/_.:-])0[1-9][0-9]{1,3} [0-9]{3,4} ?[0-9]{3,4}` + PHONE_END, 'g'), digits: [10, 11] },
];

function phones(text: string, hits: Hit[]): void {
  for (const { re, digits } of PHONES) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const n = m[0].replace(/[^0-9]/g, '').length;
      if (digits && (n < digits[0] || n > digits[1])) continue;
      if ((m[0].match(/\(/g)?.length ?? 0) !== (m[0].match(/\)/g)?.length ?? 0)) continue;
      hits.push({ start: m.index, end: m.index + m[0].length, kind: 'phone' });
    }
  }
}

// --- the guard ----------------------------------------------------------------------------------
const FINDERS: Record<PiiKind, (text: string, hits: Hit[]) => void> = { cn_id: cnIds, iban: ibans, card: cards, email: emails, phone: phones };
/** Longer, checksummed shapes first: an ID or IBAN holds digit runs a phone pattern would also take. */
const ORDER: readonly PiiKind[] = ['cn_id', 'iban', 'card', 'email', 'phone'];

export function findPii(text: string, kinds: ReadonlySet<PiiKind>): Hit[] {
  const hits: Hit[] = [];
  for (const kind of ORDER) if (kinds.has(kind)) FINDERS[kind](text, hits);
  return resolveOverlaps(hits);
}

/** `redact` puts `[REDACTED:<kind>]` in place of each; `flag` and `refuse` leave the text. */
export function scanPii(text: string, kinds: ReadonlySet<PiiKind>, action: PiiAction): TextScan {
  const hits = findPii(text, kinds).map((h) => ({ ...h, replacement: `[REDACTED:${h.kind}]` }));
  return scanOf(text, hits, action, action === 'redact');
}

export function piiGuard(kinds: readonly PiiKind[], action: PiiAction): TextGuard {
  const set = new Set(kinds);
  return { name: 'pii', scan: (text) => scanPii(text, set, action) };
}
