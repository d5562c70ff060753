import { describe, expect, it } from 'vitest';
import { SecretSet } from '../../src/audit/secrets.js';
import { readFileSync } from 'node:fs';
import { findSecrets, scanSecrets, SECRET_PLACEHOLDER, SHAPES } from '../../src/guards/result/secrets.js';
import { resolveOverlaps, type Hit } from '../../src/guards/result/text.js';

const none = { secrets: new Set<string>() };
const redact = (text: string, ctx = none) => scanSecrets(text, ctx, 'redact');
/** Fake credentials of real shapes (random characters, never issued). */
const FAKE = {
  awsId: 'AKIAQ3EGRT7NXK4ZB2LM',
  google: 'AIzaSyD3kF8qP2mN7vX4cB9wL1tR6yH0jU5eZ_a',
  github: 'ghp_4fT9kQ2mX7pL1vN8cR3wZ6yB0jH5sD9gA2eU',
  githubPat: 'github_pat_11ABCDEFG0123456789abc_' + 'x9Y8w7V6u5T4s3R2q1P0o9N8m7L6k5J4i3H2g1F0e9D8c7B6a5Z4y3X2w1V',
  slack: 'xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx',
  stripe: 'sk_live_51H8xYzAbCdEfGhIjKlMnOpQr',
  openai: 'sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7sU9wY1aC3e',
  anthropic: 'sk-ant-api03-' + 'Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7Zy6Xw5Vu4Ts3Rq2Po1Nm0Lk9Ji8Hg7Fe6Dc5Ba4Zy3Xw2Vu1Ts0Rq9Po8Nm7Lk6-AA',
};
const AWS_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKY';
const JWT = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';

describe('secrets guard: credential shapes', () => {
  it.each(Object.entries(FAKE))('redacts a %s and reports where it was, not what', (_, value) => {
    const text = `config: ${value} (rotated)`;
    const r = redact(text);
    expect(r.text).toBe(`config: ${SECRET_PLACEHOLDER} (rotated)`);
    expect(r.findings).toEqual([{ kind: 'secret', action: 'redact', count: 1, offsets: [[8, 8 + Buffer.byteLength(value)]] }]);
    expect(JSON.stringify(r.findings)).not.toContain(value.slice(4, 12));
  });

  it('finds an AWS secret key only beside its name (40 base64 characters alone are too common)', () => {
    expect(redact(`aws_secret_access_key = ${AWS_SECRET}`).text).toBe(`aws_secret_access_key = ${SECRET_PLACEHOLDER}`);
    expect(redact(`"SecretAccessKey": "${AWS_SECRET}"`).text).toBe(`"SecretAccessKey": "${SECRET_PLACEHOLDER}"`);
    expect(redact(`blob ${AWS_SECRET} end`).findings).toEqual([]);
  });

  it('keeps the Bearer prefix and masks the token; a JWT is confirmed by its header', () => {
    expect(redact(`Authorization: Bearer ${JWT}`).text).toBe(`Authorization: Bearer ${SECRET_PLACEHOLDER}`);
    expect(redact(`token=${JWT}`).text).toBe(`token=${SECRET_PLACEHOLDER}`);
    // three base64url parts whose first does not decode to a JSON header with alg: not a JWT
    expect(redact('eyJub3RhIjoiaGVhZGVyIn0.eyJzdWIiOiIxIn0.c2lnbmF0dXJl').findings).toEqual([]);
    expect(redact('Bearer tokens are described in RFC 6750.').findings).toEqual([]);
  });

  it('masks a PEM private-key block whole, and a block cut short to the end of the text', () => {
    const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1c7…\n-----END RSA PRIVATE KEY-----';
    expect(redact(`key:\n${pem}\nok`).text).toBe(`key:\n${SECRET_PLACEHOLDER}\nok`);
    expect(redact('head -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC').text).toBe(`head ${SECRET_PLACEHOLDER}`);
    expect(redact('-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----').findings).toEqual([]);
  });

  it('masks passwords in URLs and Basic credentials, not placeholders', () => {
    expect(redact('postgres://app:Xk29fLq8Zr@db.internal:5432/app').text).toBe(`postgres://app:${SECRET_PLACEHOLDER}@db.internal:5432/app`);
    expect(redact('redis://user:authpassword@127.0.0.1:6379').findings).toEqual([]);
    expect(redact('postgres://app:${DB_PASSWORD}@db:5432').findings).toEqual([]);
    const basic = Buffer.from('admin:Wq8#zLp2vN').toString('base64');
    expect(redact(`Authorization: Basic ${basic}`).text).toBe(`Authorization: Basic ${SECRET_PLACEHOLDER}`);
    expect(redact('Basic configuration is described below.').findings).toEqual([]);
  });

  it('leaves ordinary identifiers alone: hashes, UUIDs, base64 images, sk-learn, lockfile integrity', () => {
    const img = Buffer.from(Array.from({ length: 4000 }, (_, i) => (i * 7919) % 256)).toString('base64');
    const ordinary = [
      'sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
      'id 123e4567-e89b-12d3-a456-426614174000',
      `data:image/png;base64,${img}`,
      'pip install scikit-learn; import sklearn  # sk-learn-pipeline-step-one-two',
      '"integrity": "sha512-jYxGrT0A4X1hQ9yZz3fJxYm2Uu7k1w5p8wqWbC8s4Fq0k0eFQm3m1hGxL3cRkM0VfHqZ9k7gU2d8Vw=="',
      'commit 8f3c2a1d4e5b6f708192a3b4c5d6e7f809a1b2c3',
      'const secret = process.env.API_SECRET; password = getPassword();',
      'The task-runner uses a token bucket (ask-me-anything-about-tokens-please).',
    ];
    for (const t of ordinary) expect(redact(t).findings, t.slice(0, 40)).toEqual([]);
  });

  it("masks the gateway's own secret values in every form it knows (raw, URL-encoded, base64)", () => {
    const own = new SecretSet(['Zq7xK9mWv2Lp4RtY8nBc', 'p@ss w0rd/+=&']);
    const ctx = { secrets: own };
    expect(redact('echo Zq7xK9mWv2Lp4RtY8nBc', ctx).text).toBe(`echo ${SECRET_PLACEHOLDER}`);
    expect(redact(`q=${encodeURIComponent('p@ss w0rd/+=&')}`, ctx).text).toBe(`q=${SECRET_PLACEHOLDER}`);
    expect(redact(`b64 ${Buffer.from('Zq7xK9mWv2Lp4RtY8nBc').toString('base64')}`, ctx).findings[0]?.count).toBe(1);
    // a value added later (a reload) is masked from then on
    expect(redact('new-value-0192837465', ctx).findings).toEqual([]);
    own.add('new-value-0192837465');
    expect(redact('new-value-0192837465', ctx).text).toBe(SECRET_PLACEHOLDER);
  });

  it('flag reports without changing the text; refuse reports with its own action', () => {
    const text = `k=${FAKE.github}`;
    const flagged = scanSecrets(text, none, 'flag');
    expect(flagged.text).toBe(text);
    expect(flagged.findings[0]).toMatchObject({ kind: 'secret', action: 'flag', count: 1 });
    const refused = scanSecrets(text, none, 'refuse');
    expect(refused.text).toBe(text);
    expect(refused.findings[0]).toMatchObject({ action: 'refuse' });
  });

  it('counts every secret and keeps at most 16 offsets, in UTF-8 bytes after multibyte text', () => {
    const text = `é ${FAKE.awsId} ` + Array.from({ length: 20 }, () => FAKE.github).join(' ');
    const f = redact(text).findings[0];
    expect(f?.count).toBe(21);
    expect(f?.offsets).toHaveLength(16);
    expect(f?.offsets[0]).toEqual([3, 23]); // "é " is 3 bytes
  });

  it('the one-pass scan finds exactly what each shape finds alone (on the whole corpus)', () => {
    const corpus = JSON.parse(readFileSync(new URL('../fixtures/result-guards/corpus.json', import.meta.url), 'utf8')) as { samples: { text: string }[] };
    const texts = [...corpus.samples.map((x) => x.text), ...Object.values(FAKE).map((v) => `x ${v} y`), `aws_secret_access_key = ${AWS_SECRET}`, `Bearer ${JWT}`];
    let found = 0;
    for (const text of texts) {
      const alone: Hit[] = [];
      for (const shape of SHAPES) {
        const re = new RegExp(shape.re.source, 'g');
        for (let m = re.exec(text); m !== null; m = re.exec(text)) {
          const value = m[shape.group ?? 0] ?? '';
          const start = m.index + (shape.group === undefined ? 0 : m[0].lastIndexOf(value));
          if (!shape.check || shape.check(value, text, start)) alone.push({ start, end: start + value.length, kind: 'secret' });
        }
      }
      const expected = resolveOverlaps(alone).map((h) => [h.start, h.end]);
      const got = findSecrets(text, none).filter((h) => !text.slice(h.start, h.end).startsWith('-----BEGIN')).map((h) => [h.start, h.end]);
      expect(got, text.slice(0, 60)).toEqual(expected);
      found += got.length;
    }
    expect(found).toBeGreaterThan(30);
  });

  it('returns on hostile input: long runs after each prefix', () => {
    for (const t of ['sk-'.repeat(300_000), 'eyJ'.repeat(300_000), ('eyJ' + 'a'.repeat(100) + '.').repeat(10_000), 'x=' + 'a'.repeat(1 << 20), '-----BEGIN PRIVATE KEY-----'.repeat(30_000), 'http://a:b@'.repeat(90_000), 'password='.repeat(100_000), 'Bearer '.repeat(150_000)]) {
      expect(redact(t).text.length).toBeGreaterThan(0);
    }
  });
});
