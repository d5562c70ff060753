// The cost of the built-in result guards per KB of result text, in process: the defaults
// ([{secrets: redact}, {invisible: strip}], with ten gateway secret values to mask) and everything
// on, over ordinary tool results (the benign corpus of test/fixtures/result-guards: web pages,
// e-mails, docs, JSON, logs, code, Chinese) cut into strings of 1 KB, 64 KB and 1 MiB; then the
// hostile inputs of the unit tests (time per KB, bounded: every pattern is linear). Run after
// `npm run build`; prints markdown and a JSON line for the summary.
import { readFileSync } from 'node:fs';
import { compileTextGuards } from '../dist/guards/result/index.js';
import { SecretSet } from '../dist/audit/secrets.js';
import { median } from './lib/stats.mjs';

const TARGET_US = 20;
const { samples } = JSON.parse(readFileSync(new URL('../test/fixtures/result-guards/corpus.json', import.meta.url), 'utf8'));
const benign = samples.filter((s) => s.set === 'benign').map((s) => s.text).join('\n\n');
const ctx = { secrets: new SecretSet(Array.from({ length: 10 }, (_, i) => `gw-secret-${i}-Zq7xK9mWv2Lp4RtY8nBc`)) };

const DEFAULTS = [{ secrets: 'redact' }, { invisible: 'strip' }];
const EVERYTHING = [...DEFAULTS, { pii: ['email', 'phone', 'card', 'iban', 'cn_id'], action: 'redact' }, { links: { allowHosts: ['*.example.com'], action: 'defang' } }, { injection: 'flag' }];
const configs = { defaults: compileTextGuards(DEFAULTS), everything: compileTextGuards(EVERYTHING) };
for (const name of ['secrets', 'invisible', 'pii', 'links', 'injection']) configs[name] = compileTextGuards(EVERYTHING).filter((g) => g.name === name);

/** Strings of about `size` UTF-16 units cut from the benign text (repeated to reach at least 2 MiB in all). */
function chunks(size) {
  let text = benign;
  while (text.length < Math.max(2 * size, 1 << 20)) text += '\n' + benign;
  const out = [];
  for (let at = 0; at + size <= text.length; at += size) out.push(text.slice(at, at + size));
  return out;
}
const kib = (strings) => strings.reduce((n, s) => n + Buffer.byteLength(s), 0) / 1024;

function pass(guards, strings) {
  for (const s of strings) {
    let text = s;
    for (const g of guards) text = g.scan(text, ctx).text;
  }
}

/**
 * CPU µs per KB (user + system time of this process, which other processes on a loaded machine
 * inflate less than wall time): the median of `rounds` passes over all the strings, after a warm-up.
 */
function usPerKb(guards, strings, rounds) {
  pass(guards, strings);
  const kb = kib(strings);
  const times = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = process.cpuUsage();
    pass(guards, strings);
    const t = process.cpuUsage(t0);
    times.push((t.user + t.system) / kb);
  }
  return median(times);
}

const sizes = { '1 KB': chunks(1024).slice(0, 1024), '64 KB': chunks(64 << 10).slice(0, 16), '1 MiB': chunks(1 << 20).slice(0, 1) };
const ROUNDS = 7;
const figures = {};
for (const name of Object.keys(configs)) figures[name] = {};
// Round-robin: each round times every configuration in turn, so a burst of load on the shared
// machine hits them alike; each figure is the median of its rounds.
for (const [size, strings] of Object.entries(sizes)) {
  const kb = kib(strings);
  const times = Object.fromEntries(Object.keys(configs).map((n) => [n, []]));
  for (const guards of Object.values(configs)) pass(guards, strings); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, guards] of Object.entries(configs)) {
      const t0 = process.cpuUsage();
      pass(guards, strings);
      const t = process.cpuUsage(t0);
      times[name].push((t.user + t.system) / kb);
    }
  }
  for (const name of Object.keys(configs)) figures[name][size] = median(times[name]);
}
const rows = Object.entries(figures).map(([name, f]) => `| ${name === 'defaults' ? '**defaults** (secrets + invisible)' : name === 'everything' ? '**everything on**' : `${name} alone`} | ${Object.values(f).map((v) => v.toFixed(2)).join(' | ')} |`);

const M = 1 << 20;
const hostile = {
  '1 MiB of `a@a.a@`': 'a@a.a@'.repeat(M / 6),
  '`x=` + 1 MiB of `a`': 'x=' + 'a'.repeat(M),
  '100k `[`': '['.repeat(100_000),
  '100k `![`': '!['.repeat(100_000),
  '1 MiB of `sk-`': 'sk-'.repeat(M / 3),
  '1 MiB of `eyJ…a.`': ('eyJ' + 'a'.repeat(100) + '.').repeat(M / 104),
  '1 MiB of digits': '4'.repeat(M),
  '1 MiB of `ignore all the previous `': 'ignore all the previous '.repeat(M / 24),
  '1 MiB of `忽略之前`': '忽略之前'.repeat(M / 4),
  '1 MiB of `<img src=`': '<img src='.repeat(M / 9),
  '1 MiB of zero-width spaces': '\u200b'.repeat(M),
  '1 MiB of U+FFFD': '\ufffd'.repeat(M),
  '1 MiB of random bytes as UTF-8': Buffer.from(Array.from({ length: M }, (_, i) => (i * 2654435761) & 255)).toString('utf8'),
};
let worst = 0;
const hostileRows = [];
for (const [name, text] of Object.entries(hostile)) {
  const us = usPerKb(configs.everything, [text], 1);
  worst = Math.max(worst, us);
  hostileRows.push(`| ${name} | ${us.toFixed(1)} |`);
}

const d = figures.defaults;
const met = d['1 KB'] < TARGET_US && d['64 KB'] < TARGET_US;
console.log(`CPU µs per KB of result text (UTF-8), median of 7 round-robin passes over 1 MiB of ordinary tool results (the benign corpus: web pages, e-mails, docs, JSON, logs, code, Chinese) cut into strings of each size; each string goes through the guards in order, as the stage does. Ten gateway secret values are masked in every configuration.

| guards | 1 KB strings | 64 KB strings | 1 MiB strings |
| --- | ---: | ---: | ---: |
${rows.join('\n')}

Target at the defaults: under ${TARGET_US} µs per KB (**${met ? 'met' : 'missed'}**: ${d['1 KB'].toFixed(2)} µs at 1 KB, ${d['64 KB'].toFixed(2)} µs at 64 KB); everything on costs ${(figures.everything['64 KB'] / d['64 KB']).toFixed(1)}× the defaults at 64 KB.

Hostile inputs, everything on (CPU µs per KB, one pass; linear patterns keep each one bounded, worst ${worst.toFixed(1)} µs per KB):

| input | µs per KB |
| --- | ---: |
${hostileRows.join('\n')}

<!-- ${JSON.stringify({ bench: 'result-guards', targetUs: TARGET_US, defaults: d, everything: figures.everything, hostileWorstUs: worst, met })} -->`);
