import type { ScoredConcept } from './accumulate.js';

/** A tool as the prefilter sees it: only the text that helps pick it. */
export interface PrefilterTool {
  /** Canonical, e.g. "weather.current" ([a-z0-9_-] segments joined by '.'). */
  name: string;
  /** e.g. "weather__current" (OpenAI/Anthropic-safe name). */
  providerName: string;
  aliases?: readonly string[];
  title?: string;
  description: string;
  tags: readonly string[];
  /** Authors' example user requests: the strongest signal. */
  examples: readonly string[];
  params: readonly { name: string; description?: string }[];
}

export interface Candidate {
  name: string;
  score: number;
  /** matched: the query words that matched (with their tool-side terms); named: the query named the tool. */
  why?: { matched: string[]; named?: boolean; learned?: string[] };
}

/**
 * Learned terms (prefilter.learn, src/prefilter/learn/): given the index's tool names and the
 * query's concepts, extra scored concepts the ranker adds after its first pass.
 */
export type LearnedBoost = (names: readonly string[], concepts: readonly Concept[]) => readonly ScoredConcept[];

export interface SearchOptions {
  k: number;
  /** false = never a candidate (hidden or prefilter:false). */
  filter?: (name: string) => boolean;
  explain?: boolean;
  /** Learned terms as one more field (off when absent). */
  learned?: LearnedBoost;
}

/** Index fields, each weighted and length-normalised separately (BM25F). */
export const FIELDS = ['name', 'title', 'tags', 'description', 'examples', 'params', 'translated'] as const;
export type Field = (typeof FIELDS)[number];

/** One way to read a query word: some index terms that together stand for it. */
export interface Alternative {
  terms: readonly string[];
  weight: number;
}

/**
 * One query word (English word, Chinese word, or a Chinese word's translations).
 * A tool scores the best of its alternatives, so a word with many senses is not counted many times.
 */
export interface Concept {
  /** The query text it came from, for explanations. */
  label: string;
  alternatives: Alternative[];
}
