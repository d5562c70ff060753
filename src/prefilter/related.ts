import { readAssetText } from './assets.js';
import { englishTerms, termOf } from './english.js';
import { entriesFromJson, entriesFromLines, fieldValueAt, stringAt, type Entries } from './lexicon-entries.js';
import { usageFromText, type Usage } from './lexicon-usage.js';
import type { Alternative } from './types.js';

/**
 * What the prefilter knows about English words beyond the tools' own text, from WordNet (see
 * scripts/build-wordnet.mjs): other ways to say a word, and how topical a word is.
 */
export interface RelatedTerms {
  /** Other readings of one lower-case query word ("picture" → image, "decide" → decision), strongest first. */
  related(word: string): readonly Alternative[];
  /** How often the word is used in general English (SemCor tags of its dictionary form); 0 if rare. */
  frequency(word: string): number;
  /** Whether the word (or a dictionary form of it) is an English word WordNet knows, to split run-together names. */
  isWord(word: string): boolean;
  /**
   * How much the word can tell one tool from another, in (0, 1]: words common in all English
   * ("find", "provide") and adjectives or adverbs ("detailed", "visually") say less about a topic.
   */
  prior(word: string): number;
}

/** Weight of each relation against the word itself: s synonym, d derivation, p pertainym, h hypernym, t topic. */
const KIND_WEIGHT: Readonly<Record<string, number>> = { s: 0.5, d: 0.6, p: 0.5, h: 0.3, t: 0.25 };
/** How much the k-th kept sense counts (senses come most frequent first). */
const SENSE_DECAY = 0.7;
/** Prior: weight lost per unit of log general frequency ("find": 1 / (1 + 0.1 ln 706) ≈ 0.6). */
const FREQUENCY_DAMPING = 0.1;
/** Prior: weight lost by a word used only as an adjective or adverb. */
const MODIFIER_DAMPING = 0.5;
const CACHE_LIMIT = 50_000;

// Inflections back to a dictionary form (WordNet's morphy rules), tried in order.
const SUFFIXES: readonly (readonly [string, string])[] = [
  ['ies', 'y'], ['ses', 's'], ['xes', 'x'], ['zes', 'z'], ['ches', 'ch'], ['shes', 'sh'], ['men', 'man'],
  ['es', 'e'], ['es', ''], ['s', ''], ['ied', 'y'], ['ed', 'e'], ['ed', ''], ['ing', 'e'], ['ing', ''],
  ['ier', 'y'], ['iest', 'y'], ['er', ''], ['est', ''], ['er', 'e'], ['est', 'e'],
];

/** Dictionary forms to try for a word: itself, then de-inflected forms ("stopped" → "stop"). */
export function baseForms(word: string): string[] {
  const out = [word];
  for (const [suffix, repl] of SUFFIXES) {
    if (!word.endsWith(suffix) || word.length - suffix.length < 2) continue;
    const base = word.slice(0, word.length - suffix.length) + repl;
    out.push(base);
    // A doubled final consonant: "stopped" → "stopp" → "stop".
    if (repl === '' && /([b-df-hj-np-tv-z])\1$/.test(base)) out.push(base.slice(0, -1));
  }
  return out;
}

/** One group "<kind><rank> target target" → alternatives, keeping the best weight per reading. */
function addGroup(group: string, own: string | null, best: Map<string, Alternative>): void {
  const [head = '', ...targets] = group.split(' ');
  const kind = KIND_WEIGHT[head[0] ?? ''];
  const rank = Number(head.slice(1));
  if (kind === undefined || !Number.isFinite(rank)) return;
  for (const target of targets) {
    const terms = englishTerms(target.replace(/_/g, ' '));
    if (terms.length === 0 || (terms.length === 1 && terms[0] === own)) continue;
    // A multi-word reading spreads its weight over its words, as a Chinese sense does.
    const weight = (kind * SENSE_DECAY ** rank) / Math.sqrt(terms.length);
    const key = terms.join(' ');
    const cur = best.get(key);
    if (!cur || cur.weight < weight) best.set(key, { terms, weight });
  }
}

interface WordInfo {
  related: readonly Alternative[];
  frequency: number;
  prior: number;
}

/**
 * Builds the lookup from the derived data: `entries` "word<TAB>group|group" and `usage`
 * "word count modifierTenths ..." (formats in scripts/build-wordnet.mjs), as lines and a string,
 * or the shipped file's, looked up in place.
 */
export function createRelated(entries: readonly string[] | Entries, usage: string | Usage = ''): RelatedTerms {
  const raw = Array.isArray(entries) ? entriesFromLines((entries as readonly string[]).filter((l) => l.indexOf('\t') > 0)) : (entries as Entries);
  const use = typeof usage === 'string' ? usageFromText(usage) : usage;

  // Parsed on first use and cached: a query touches a handful of the ~76k words.
  const cache = new Map<string, WordInfo>();
  const info = (word: string): WordInfo => {
    const hit = cache.get(word);
    if (hit) return hit;
    const forms = baseForms(word);
    const groupsAt = forms.find((f) => raw.has(f));
    const best = new Map<string, Alternative>();
    if (groupsAt !== undefined) for (const g of (raw.get(groupsAt) as string).split('|')) addGroup(g, termOf(word), best);
    const usageAt = forms.find((f) => use.has(f));
    const [frequency, modifier] = usageAt === undefined ? [0, 0] : (use.get(usageAt) as readonly [number, number]);
    const out: WordInfo = {
      related: [...best.values()].sort((a, b) => b.weight - a.weight),
      frequency,
      prior: (1 - MODIFIER_DAMPING * modifier) / (1 + FREQUENCY_DAMPING * Math.log(1 + frequency)),
    };
    if (cache.size < CACHE_LIMIT) cache.set(word, out);
    return out;
  };
  return {
    isWord: (word) => baseForms(word).some((f) => raw.has(f) || use.has(f)),
    related: (word) => info(word).related,
    frequency: (word) => info(word).frequency,
    prior: (word) => info(word).prior,
  };
}

let shared: RelatedTerms | undefined;

/**
 * The shipped related-terms data, loaded once per process on first use. en-related.json (~4 MB)
 * stays one string looked up in place (lexicon-entries.ts), not parsed into ~76k strings.
 */
export function loadRelated(): RelatedTerms {
  if (!shared) {
    const text = readAssetText('en-related.json');
    const usageAt = fieldValueAt(text, 'usage');
    if (usageAt < 0 || text.charCodeAt(usageAt) !== 0x22) {
      throw new Error('prefilter: en-related.json is malformed; rebuild with `node scripts/build-wordnet.mjs`');
    }
    shared = createRelated(entriesFromJson(text, 'entries'), usageFromText(stringAt(text, usageAt)));
  }
  return shared;
}
