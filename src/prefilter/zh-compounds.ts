import type { Postings } from './bm25f.js';
import { isChineseStopWord } from './chinese.js';
import type { Lexicon } from './lexicon.js';
import type { Alternative, Concept } from './types.js';

/**
 * One more reading of a Chinese query word, on top of the word, its bigrams and its English senses
 * (analyze.ts chineseConcepts): a lone character also reads as the index's words that contain it.
 * Colloquial requests use one-character verbs and nouns (堵, 退, 寄, 仓) where descriptions use
 * compounds (拥堵, 退款, 寄件, 仓库).
 *
 * Synonyms through English (zh → en → zh) need nothing here: a tool's Chinese words are indexed
 * with their English senses (the translated field), which a query word's senses match. An explicit
 * zh → en → zh expansion, and the WordNet words of a Chinese word's first sense, were measured on
 * the Chinese catalog and left out: no recall gain, a little hit@1 lost (docs/benchmarks.md).
 *
 * The character → compounds map is built from the index's vocabulary, once per index, when its
 * first Chinese query needs it: an English-only registry never builds it.
 */

/** How much a compound containing a lone query character counts against the character itself. */
const COMPOUND_WEIGHT = 0.45;
/** A character found in more of the index's words than this says little (个, 子, 不): no compounds. */
const MAX_COMPOUNDS = 40;

/** Character → the index's dictionary words (two or more characters) that contain it. */
type Compounds = ReadonlyMap<string, readonly string[]>;

const compoundMaps = new WeakMap<ReadonlyMap<string, Postings>, Compounds>();

const isCjk = (term: string): boolean => term.charCodeAt(0) >= 0x3400;

function compoundMap(postings: ReadonlyMap<string, Postings>, lex: Lexicon): Compounds {
  const hit = compoundMaps.get(postings);
  if (hit) return hit;
  const map = new Map<string, string[]>();
  for (const term of postings.keys()) {
    // Index terms include bigrams across two words (询指): only dictionary words count.
    if (!isCjk(term) || term.length < 2 || !lex.has(term)) continue;
    for (const ch of new Set(term)) {
      const list = map.get(ch);
      if (list) list.push(term);
      else map.set(ch, [term]);
    }
  }
  compoundMaps.set(postings, map);
  return map;
}

/** The index's words that contain a lone character; none for a function word or a too common one. */
export function compoundsOf(char: string, lex: Lexicon, postings: ReadonlyMap<string, Postings>): Alternative[] {
  if (isChineseStopWord(char)) return [];
  const list = compoundMap(postings, lex).get(char) ?? [];
  if (list.length > MAX_COMPOUNDS) return [];
  return list.map((t) => ({ terms: [t], weight: COMPOUND_WEIGHT }));
}

/** A query concept with the compounds added, when it is a lone Chinese character. */
export function withCompounds(c: Concept, lex: Lexicon | null, postings: ReadonlyMap<string, Postings>): Concept {
  if (!lex || !isCjk(c.label) || [...c.label].length !== 1) return c;
  const extra = compoundsOf(c.label, lex, postings);
  if (extra.length === 0) return c;
  const have = new Set(c.alternatives.map((a) => a.terms.join(' ')));
  return { label: c.label, alternatives: [...c.alternatives, ...extra.filter((a) => !have.has(a.terms.join(' ')))] };
}
