import { CJK_RUN, bigrams, chineseIndexTerms, contentSpans, hasCjk } from './chinese.js';
import { englishTerms, englishWords, splitIdentifier, termOf } from './english.js';
import type { Lexicon } from './lexicon.js';
import type { RelatedTerms } from './related.js';
import type { Alternative, Concept, Field, PrefilterTool } from './types.js';

/** Term → (possibly fractional) frequency, per field. */
export type FieldBags = Record<Field, Map<string, number>>;

/** How much the k-th dictionary sense of a Chinese word counts (first senses are the usual ones). */
const SENSE_DECAY = 0.8;
/** Senses of a lone character are a guess: it is usually part of a word the lexicon missed. */
const SINGLE_CHAR_SENSES = 0.5;
/** Weight of a Chinese word's English senses against the word itself. */
const TRANSLATION_WEIGHT = 0.9;
/** Weight of a dictionary synonym ("film" for "movie") against the word itself. */
const SYNONYM_WEIGHT = 0.3;
/** A word said again counts more (the topic of a long request tends to recur): 1 + this × ln(times). */
const REPEAT_BOOST = 0.5;

function add(bag: Map<string, number>, term: string, tf = 1): void {
  bag.set(term, (bag.get(term) ?? 0) + tf);
}

/**
 * Adds the terms of free text to a field: English words stemmed, Chinese words and bigrams,
 * and the English senses of the Chinese words to `translated` (so English queries find
 * tools described in Chinese).
 */
export function addText(text: string, bag: Map<string, number>, translated: Map<string, number>, lex: Lexicon | null): void {
  for (const t of englishTerms(text.replace(CJK_RUN, ' '))) add(bag, t);
  if (!lex || !hasCjk(text)) return;
  for (const run of text.match(CJK_RUN) ?? []) {
    const spans = contentSpans(lex.toSimplified(run), lex);
    for (const t of chineseIndexTerms(spans)) add(bag, t);
    for (const w of spans.flat()) {
      const factor = w.length === 1 ? SINGLE_CHAR_SENSES : 1;
      for (const s of lex.senses(w).slice(0, 3)) {
        const tf = (factor * SENSE_DECAY ** s.rank) / s.terms.length;
        for (const t of s.terms) add(translated, t, tf);
      }
    }
  }
}

/** How a run-together word splits: its parts, and how much each part counts (1 = as a plain word). */
export interface NameSplit {
  parts: string[];
  weight: number;
}
export type NameSplitter = (word: string) => NameSplit | null;

/**
 * Terms of an identifier, with their term frequencies: its parts, the parts of run-together words
 * (at the split's weight; a split less sure than the registry's own words keeps the whole word
 * too), and each segment glued.
 */
export function identifierTerms(id: string, split: NameSplitter): [string, number][] {
  const out: [string, number][] = [];
  const push = (word: string, tf: number): void => {
    const t = termOf(word);
    if (t !== null) out.push([t, tf]);
  };
  for (const segment of id.split(/\.|__|\//)) {
    const parts = splitIdentifier(segment);
    for (const p of parts) {
      const s = p.length >= 6 ? split(p) : null;
      if (!s) {
        push(p, 1);
        continue;
      }
      for (const piece of s.parts) push(piece, s.weight);
      if (s.weight < 1) push(p, 1 - s.weight);
    }
    const glued = parts.join('');
    if (parts.length > 1 && glued.length > 2) out.push([glued, 1]);
  }
  return out;
}

export function emptyBags(): FieldBags {
  return {
    name: new Map(), title: new Map(), tags: new Map(), description: new Map(),
    examples: new Map(), params: new Map(), translated: new Map(),
  };
}

/** Every field of one tool, analysed. `split` breaks run-together name words into known words. */
export function toolFields(tool: PrefilterTool, lex: Lexicon | null, split: NameSplitter): FieldBags {
  const f = emptyBags();
  const ids = new Set([tool.name, tool.providerName, ...(tool.aliases ?? [])]);
  // Spellings of one name ("crm.find_contacts", "crm__find_contacts") say the same words: a term
  // counts as often as the spelling that says it most, not once per spelling.
  for (const id of ids) {
    const one = new Map<string, number>();
    if (hasCjk(id)) addText(id, one, f.translated, lex);
    else for (const [t, tf] of identifierTerms(id, split)) add(one, t, tf);
    for (const [t, tf] of one) f.name.set(t, Math.max(f.name.get(t) ?? 0, tf));
  }
  if (tool.title) addText(tool.title, f.title, f.translated, lex);
  for (const tag of tool.tags) {
    if (hasCjk(tag)) addText(tag, f.tags, f.translated, lex);
    else for (const [t, tf] of identifierTerms(tag, split)) add(f.tags, t, tf);
  }
  addText(tool.description, f.description, f.translated, lex);
  for (const ex of tool.examples) addText(ex, f.examples, f.translated, lex);
  for (const p of tool.params) {
    for (const [t, tf] of identifierTerms(p.name, () => null)) add(f.params, t, tf);
    if (p.description) addText(p.description, f.params, f.translated, lex);
  }
  return f;
}

/**
 * English concepts. A camel-case word ("YouTube", "sendEmail") may stand for itself or for its
 * parts, so it gets both readings; related words (WordNet) are weaker readings, and the word's
 * prior (how topical it is in general English) and repeats in the query scale them all.
 */
function englishConcepts(text: string, lex: Lexicon | null, rel: RelatedTerms | null, out: Map<string, Concept>): void {
  const seen = new Map<string, { alternatives: Alternative[]; times: number; prior: number }>();
  for (const word of englishWords(text, true)) {
    const lower = word.toLowerCase();
    const t = termOf(lower);
    if (t === null) continue;
    const again = seen.get(t);
    if (again) {
      again.times++;
      continue;
    }
    const alternatives: Alternative[] = [{ terms: [t], weight: 1 }];
    if (/[a-z][A-Z]/.test(word)) {
      const parts = splitIdentifier(word).map(termOf).filter((x): x is string => x !== null);
      if (parts.length > 1) alternatives.push({ terms: parts, weight: 1 / Math.sqrt(parts.length) });
    }
    if (lex) {
      // The usual Chinese words for it, for tools described in Chinese.
      for (const zh of lex.chineseFor(t)) alternatives.push({ terms: [zh], weight: TRANSLATION_WEIGHT });
      for (const s of lex.synonyms(t)) alternatives.push({ terms: [s.term], weight: SYNONYM_WEIGHT * (0.5 + 0.5 * s.strength) });
    }
    if (rel) alternatives.push(...rel.related(lower));
    seen.set(t, { alternatives, times: 1, prior: rel ? rel.prior(lower) : 1 });
    out.set(t, { label: lower, alternatives });
  }
  for (const { alternatives, times, prior } of seen.values()) {
    const scale = prior * (1 + REPEAT_BOOST * Math.log(times));
    if (scale === 1) continue;
    for (let i = 0; i < alternatives.length; i++) {
      const a = alternatives[i] as Alternative;
      alternatives[i] = { terms: a.terms, weight: a.weight * scale };
    }
  }
}

function chineseConcepts(run: string, lex: Lexicon, out: Map<string, Concept>): void {
  for (const span of contentSpans(lex.toSimplified(run), lex)) {
    for (const w of span) {
      if (out.has(w)) continue;
      const alternatives: Alternative[] = [{ terms: [w], weight: 1 }];
      if (w.length > 2) {
        const bg = bigrams(w);
        alternatives.push({ terms: bg, weight: 0.9 / Math.sqrt(bg.length) });
      }
      const factor = TRANSLATION_WEIGHT * (w.length === 1 ? SINGLE_CHAR_SENSES : 1);
      for (const s of lex.senses(w)) {
        alternatives.push({ terms: s.terms, weight: (factor * SENSE_DECAY ** s.rank) / Math.sqrt(s.terms.length) });
      }
      out.set(w, { label: w, alternatives });
    }
  }
}

/** A query as concepts: one per distinct content word, English or Chinese, in order. */
export function queryConcepts(query: string, lex: Lexicon | null, rel: RelatedTerms | null = null): Concept[] {
  const out = new Map<string, Concept>();
  englishConcepts(query.replace(CJK_RUN, ' '), lex, rel, out);
  if (lex && hasCjk(query)) for (const run of query.match(CJK_RUN) ?? []) chineseConcepts(run, lex, out);
  return [...out.values()];
}
