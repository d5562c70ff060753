import { type NameSplit, toolFields } from './analyze.js';
import { buildPostings, namespaceOf, type Postings } from './bm25f.js';
import { englishWords, isStopWord } from './english.js';
import { buildForward, type ForwardIndex } from './feedback.js';
import { FuzzyVocabulary } from './fuzzy.js';
import { loadLexicon, type Lexicon } from './lexicon.js';
import { NameMatcher, splitName } from './names.js';
import { rank, type SearchableIndex } from './ranker.js';
import { loadRelated, type RelatedTerms } from './related.js';
import type { Candidate, PrefilterTool, SearchOptions } from './types.js';

export type { Candidate, PrefilterTool, SearchOptions } from './types.js';

export interface BuildOptions {
  /** The Chinese–English bridge; null turns it off (English-only ranking). Default: the shipped one. */
  lexicon?: Lexicon | null;
  /**
   * English word knowledge (WordNet): related words as weaker readings of query words, and how
   * topical each word is. null turns it off. Default: the shipped data.
   */
  related?: RelatedTerms | null;
  /** Pseudo-relevance feedback (a second pass with the best tools' terms). Default: on. */
  feedback?: boolean;
  /**
   * A lone Chinese character in a query also reads as the index's words that contain it
   * (zh-compounds.ts: 堵 → 拥堵, 退 → 退款). Default: on.
   */
  chineseReadings?: boolean;
}

/**
 * An immutable ranking index over one registry snapshot. Cheap to rebuild (5,000 tools well
 * under a second), so the registry builds a new one on every reload instead of patching.
 */
export class PrefilterIndex implements SearchableIndex {
  readonly size: number;

  private constructor(
    readonly names: readonly string[],
    readonly postings: ReadonlyMap<string, Postings>,
    readonly matcher: NameMatcher,
    readonly fuzzy: FuzzyVocabulary,
    readonly words: ReadonlySet<string>,
    readonly lexicon: Lexicon | null,
    readonly related: RelatedTerms | null,
    readonly forward: ForwardIndex | null,
    readonly chineseReadings: boolean,
  ) {
    this.size = names.length;
  }

  static build(tools: readonly PrefilterTool[], options: BuildOptions = {}): PrefilterIndex {
    const lexicon = options.lexicon === undefined ? loadLexicon() : options.lexicon;
    const related = options.related === undefined ? loadRelated() : options.related;
    // Words of the tools' prose, to split run-together names ("airqualityforecast").
    const words = new Set<string>();
    for (const t of tools) {
      for (const text of [t.description, t.title ?? '', ...t.examples]) {
        for (const w of englishWords(text)) if (w.length >= 3 && !isStopWord(w)) words.add(w);
      }
    }
    const isWord = related ? (w: string): boolean => related.isWord(w) : null;
    // Name words repeat across a registry (vendor prefixes, "tool", "api"): split each once.
    const splits = new Map<string, NameSplit | null>();
    const split = (w: string): NameSplit | null => {
      let s = splits.get(w);
      if (s === undefined) {
        s = splitName(w, words, isWord);
        splits.set(w, s);
      }
      return s;
    };
    const bags = tools.map((t) => toolFields(t, lexicon, split));
    const postings = buildPostings(bags, tools.map((t) => namespaceOf(t.name)));
    const matcher = new NameMatcher(tools.map((t) => [t.name, t.providerName, ...(t.aliases ?? [])]));
    const forward = options.feedback === false ? null : buildForward(postings, tools.length);
    const nameTerms = new Set<string>();
    for (const b of bags) for (const t of b.name.keys()) nameTerms.add(t);
    const fuzzy = new FuzzyVocabulary(postings.keys(), nameTerms);
    return new PrefilterIndex(tools.map((t) => t.name), postings, matcher, fuzzy, words, lexicon, related, forward, options.chineseReadings !== false);
  }

  /** The best tools for a query, best first, at most `k`; tools the query names come first. */
  search(query: string, opts: SearchOptions): Candidate[] {
    return rank(this, query, opts);
  }
}
