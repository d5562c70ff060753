import { describe, expect, it } from 'vitest';
import { REDACTED, SecretMatcher, SecretSet, secretForms, secretMatcher } from '../../src/audit/secrets.js';
import { redact, scrubSecrets, TOO_DEEP } from '../../src/audit/redact.js';

const SECRET = 'Zq7xK9mWv2Lp4RtY8nBc';
/** A secret with characters every encoding treats differently. */
const ODD = 'p@ss w0rd/+=&"é~';

/** Every prefix of `secret` of at least 4 characters that occurs in `text`. */
function prefixesIn(text: string, secret: string): string[] {
  const found: string[] = [];
  for (let n = 4; n <= secret.length; n++) if (text.includes(secret.slice(0, n))) found.push(secret.slice(0, n));
  return found;
}

describe('secret forms', () => {
  const m = new SecretMatcher([SECRET, ODD]);

  it.each([
    ['raw', (s: string) => s],
    ['encodeURIComponent', encodeURIComponent],
    ['encodeURIComponent, lower-case hex', (s: string) => encodeURIComponent(s).replace(/%[0-9A-F]{2}/g, (x) => x.toLowerCase())],
    ['form encoding (URLSearchParams)', (s: string) => new URLSearchParams([['k', s]]).toString().slice(2)],
    ['form encoding (+ for space)', (s: string) => encodeURIComponent(s).replace(/%20/g, '+')],
    ['encodeURI', encodeURI],
    ['JSON-escaped', (s: string) => JSON.stringify(s).slice(1, -1)],
    ['base64', (s: string) => Buffer.from(s).toString('base64')],
    ['base64 without padding', (s: string) => Buffer.from(s).toString('base64').replace(/=+$/, '')],
    ['base64url', (s: string) => Buffer.from(s).toString('base64url')],
    ['base64url with padding', (s: string) => Buffer.from(s).toString('base64').replace(/\+/g, '-').replace(/\//g, '_')],
  ])('masks the %s form, inside other text', (_name, encode) => {
    for (const s of [SECRET, ODD]) {
      const text = `before ${encode(s)} after`;
      expect(m.mask(text)).toBe(`before ${REDACTED} after`);
    }
  });

  it('masks the base64 of a value that holds the secret at any offset (Basic user:secret): at most one character beside the mask carries secret bits', () => {
    for (const user of ['', 'a', 'ab', 'abc', 'user', 'admin', 'x'.repeat(17)]) {
      for (const s of [SECRET, ODD]) {
        for (const [tail, encoding] of [[':tail', 'base64'], ['', 'base64url']] as const) {
          const b64 = Buffer.from(`${user}:${s}${tail}`).toString(encoding);
          const masked = m.mask(`Basic ${b64}`);
          const [left, right] = masked.slice('Basic '.length).split(REDACTED) as [string, string];
          // Left: the characters of `user:` alone, then at most one that mixes in the secret's first bits; right: likewise, and padding.
          const prefixBits = (user.length + 1) * 8;
          expect(left.length).toBeLessThanOrEqual(Math.floor(prefixBits / 6) + 1);
          expect(left.slice(0, Math.floor(prefixBits / 6))).toBe(b64.slice(0, Math.floor(prefixBits / 6)));
          expect(right.replace(/=+$/, '').length).toBeLessThanOrEqual(Math.ceil((Buffer.byteLength(tail) * 8) / 6) + 1);
        }
      }
    }
  });

  it('masks the decoded text of a secret that is itself base64 credentials, and the password alone', () => {
    const creds = Buffer.from('deploy:hunter2-long-pass').toString('base64');
    const c = new SecretMatcher([creds]);
    expect(c.mask('user deploy:hunter2-long-pass rejected')).toBe(`user ${REDACTED} rejected`);
    expect(c.mask('bad password hunter2-long-pass')).toBe(`bad password ${REDACTED}`);
  });

  it('leaves values shorter than 6 characters alone: they are not secrets', () => {
    const short = new SecretMatcher(['80', 'true', 'abcde']);
    expect(short.empty).toBe(true);
    expect(short.mask('port 80 is true, abcde')).toBe('port 80 is true, abcde');
    expect(scrubSecrets('port 80 and true', new Set(['80', 'true']))).toBe('port 80 and true');
  });

  it('takes a secret the URI encoders refuse (a lone surrogate) without throwing', () => {
    const odd = 'abc\uD800defgh';
    expect(new SecretMatcher([odd]).mask(`x ${odd} y`)).toBe(`x ${REDACTED} y`);
  });

  it('computes the forms once per version of the set, and again when it grows', () => {
    const set = new SecretSet(['first-secret-value']);
    const a = secretMatcher(set);
    expect(secretMatcher(set)).toBe(a);
    set.add('first-secret-value'); // no change
    expect(secretMatcher(set)).toBe(a);
    set.add('second-secret-value');
    const b = secretMatcher(set);
    expect(b).not.toBe(a);
    expect(b.mask('second-secret-value')).toBe(REDACTED);
    expect(secretForms('second-secret-value')).toContain(Buffer.from('second-secret-value').toString('base64'));
  });

  it('matches in time linear in the text (an alternation of literals, no backtracking blow-up)', () => {
    const many = new SecretMatcher(Array.from({ length: 50 }, (_, i) => `aaaaaaaaaaaaaaaaaa${i}b`));
    const text = 'a'.repeat(1_000_000);
    const t0 = performance.now();
    expect(many.mask(text)).toBe(text);
    const t1 = performance.now();
    many.mask('a'.repeat(2_000_000));
    const t2 = performance.now();
    expect(t2 - t1).toBeLessThan((t1 - t0) * 4 + 50);
  });
});

describe('mask, then cut', () => {
  const m = new SecretMatcher([SECRET]);

  it('leaves no prefix of a secret that straddles the cut, at every offset', () => {
    for (let pad = 1000; pad < 1030; pad++) {
      const text = 'x'.repeat(pad) + SECRET + ' and more text after it'.repeat(20);
      const cut = m.cut(text, 1024);
      expect(prefixesIn(cut, SECRET)).toEqual([]);
      expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(1024 + 3);
      expect(cut.endsWith('…')).toBe(true);
    }
  });

  it('reads past the first window when masks shorten the text, and never shows a form cut at the window edge', () => {
    // Many secrets before the cut shrink the masked text: what follows must still be masked whole.
    for (let extra = 0; extra < 40; extra++) {
      const text = `${SECRET} `.repeat(60) + 'y'.repeat(extra) + SECRET.repeat(80);
      const cut = m.cut(text, 1024);
      expect(prefixesIn(cut, SECRET)).toEqual([]);
    }
  });

  it('cuts at a character boundary and marks the cut; short text comes back whole', () => {
    expect(m.cut('short', 1024)).toBe('short');
    const cut = SecretMatcher.NONE.cut('é'.repeat(600), 1023);
    expect(cut).toBe(`${'é'.repeat(511)}…`);
    expect(m.cut(Buffer.from(`ok ${SECRET}`), 1024)).toBe(`ok ${REDACTED}`);
  });

  it('masks only the start of a large body (the part that can reach the cut)', () => {
    const body = Buffer.from('z'.repeat(10_000_000) + SECRET);
    const t0 = performance.now();
    const cut = m.cut(body, 1024);
    expect(performance.now() - t0).toBeLessThan(50);
    expect(cut).toBe(`${'z'.repeat(1024)}…`);
  });
});

describe('secrets escaped by other encoders, in any mix (red team)', () => {
  const m = new SecretMatcher([ODD]);
  const hex4 = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  let k = 0;
  it.each([
    // Go's encoding/json escapes <, > and & as \u003c, \u003e, \u0026.
    ['Go JSON (& as \\u0026)', (s: string) => JSON.stringify(s).slice(1, -1).replace(/[<>&]/g, hex4)],
    // Python's json.dumps (ensure_ascii) writes non-ASCII as \u00e9; some encoders upper-case it.
    ['Python JSON (é as \\u00e9)', (s: string) => JSON.stringify(s).slice(1, -1).replace(/[^\x00-\x7f]/g, hex4)],
    ['JSON with upper-case \\u00E9', (s: string) => JSON.stringify(s).slice(1, -1).replace(/[^\x00-\x7f]/g, (c) => hex4(c).toUpperCase().replace('\\U', '\\u'))],
    // PHP's json_encode escapes '/' as \/.
    ['PHP JSON (/ as \\/)', (s: string) => JSON.stringify(s).slice(1, -1).replace(/\//g, '\\/')],
    ['every character as \\uXXXX', (s: string) => [...s].map(hex4).join('')],
    ['URL-encoded, hex case mixed (%2f next to %2B)', (s: string) => encodeURIComponent(s).replace(/%[0-9A-F]{2}/g, (x) => (k++ % 2 ? x.toLowerCase() : x))],
    ["URL-encoded with RFC 3986's reserved ~ too (%7E)", (s: string) => encodeURIComponent(s).replace(/~/g, '%7E')],
    ['every byte percent-encoded', (s: string) => [...Buffer.from(s)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')],
  ])('masks the %s form', (_name, encode) => {
    const form = encode(ODD);
    expect(form).not.toBe(ODD);
    const out = m.mask(`{"error":"bad key ${form} given"}`);
    expect(out).toBe(`{"error":"bad key ${REDACTED} given"}`);
    const cut = m.cut(`${'x'.repeat(1000)}${form}${'y'.repeat(2000)}`, 1024);
    expect(cut.includes(form.slice(0, 6))).toBe(false);
  });

  it('stays fast with 1,000 secrets on a megabyte full of escapes', () => {
    const many = Array.from({ length: 1000 }, (_, i) => `sec/${i}+${'k'.repeat(12)}`);
    const big = new SecretMatcher(many);
    const text = 'lorem %20ipsum \\u0041 \\n '.repeat(40_000);
    const t0 = performance.now();
    expect(big.mask(text)).toBe(text);
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(big.mask(`a ${encodeURIComponent(many[7] as string).toLowerCase()} b`)).toBe(`a ${REDACTED} b`);
  });

  it('leaves escapes that decode to no secret as they are', () => {
    const text = 'a %zz \\q %C3 \\u12 %41%42 \\u0041 end';
    expect(m.mask(text)).toBe(text);
  });
});

describe('scrubbing values for the audit log and logs', () => {
  it('masks encoded forms inside nested values; returns the value itself when nothing is secret', () => {
    const value = { a: [{ b: `x ${Buffer.from(SECRET).toString('base64')} y` }], c: encodeURIComponent(SECRET) };
    expect(scrubSecrets(value, new Set([SECRET]))).toEqual({ a: [{ b: `x ${REDACTED} y` }], c: REDACTED });
    const plain = { a: [1, { b: 'no secret here' }] };
    expect(scrubSecrets(plain, new Set())).toBe(plain);
    expect(new SecretMatcher([SECRET]).maskDeep(plain)).toBe(plain);
  });

  it('cuts values nested past 1,000 levels (with or without secrets), so the copy can always be written', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = i % 2 ? [deep] : { a: deep };
    for (const secrets of [new Set<string>(), new Set([SECRET])]) {
      const out = redact(deep, [['password']], secrets);
      const text = JSON.stringify(out);
      expect(text).toContain(TOO_DEEP);
      expect(text.length).toBeLessThan(10_000);
    }
  });
});
