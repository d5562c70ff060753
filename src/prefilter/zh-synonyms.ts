import type { Postings } from './bm25f.js';
import { isChineseStopWord } from './chinese.js';
import type { Lexicon } from './lexicon.js';
import type { RelatedTerms } from './related.js';
import type { Alternative, Concept } from './types.js';

/**
 * More readings of a Chinese query word, on top of the word, its bigrams and its English senses
 * (analyze.ts chineseConcepts):
 *
 * - the index's words that contain a lone character: colloquial requests use one-character verbs
 *   (堵, 退, 寄) where descriptions use compounds (拥堵, 退款, 寄件).
 * - the English related words (WordNet) of its first English sense, as an English query word gets
 *   them: 雾霾 "smog" → air pollution, 布洛芬 "ibuprofen" → Advil.
 *
 * (Synonyms through English, zh → en → zh, need nothing here: a tool's Chinese words are indexed
 * with their English senses (the translated field), which a query word's senses match.)
 *
 * The character → compounds map is built from the index's vocabulary, once per index, when its
 * first Chinese query needs it: an English-only registry never builds it.
 */

/** How much a compound containing a lone query character counts against the character itself. */
const COMPOUND_WEIGHT = 0.45;
/** A character found in more of the index's words than this says little (个, 子, 不): no compounds. */
const MAX_COMPOUNDS = 40;
/** Weight of the WordNet words of a Chinese word's first sense, against the word itself. */
const RELATED_WEIGHT = 0.5;
/** The same for a later sense, per rank (first senses are the usual ones). */
const SENSE_DECAY = 0.7;

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

/** The WordNet words of a Chinese word's first one-word English sense. */
export function relatedOfSenses(word: string, lex: Lexicon, rel: RelatedTerms): Alternative[] {
  const first = lex.senses(word).find((s) => s.terms.length === 1);
  if (!first) return [];
  const scale = RELATED_WEIGHT * SENSE_DECAY ** first.rank;
  return rel.related(first.terms[0] as string).map((a) => ({ terms: a.terms, weight: a.weight * scale }));
}

/** A query concept with the readings above added, when it is a Chinese word. */
export function withChineseReadings(
  c: Concept,
  lex: Lexicon | null,
  postings: ReadonlyMap<string, Postings>,
  rel: RelatedTerms | null,
): Concept {
  if (!lex || !isCjk(c.label)) return c;
  const extra = [...c.label].length === 1 ? compoundsOf(c.label, lex, postings) : rel ? relatedOfSenses(c.label, lex, rel) : [];
  if (extra.length === 0) return c;
  const have = new Set(c.alternatives.map((a) => a.terms.join(' ')));
  return { label: c.label, alternatives: [...c.alternatives, ...extra.filter((a) => !have.has(a.terms.join(' ')))] };
}
