import { queryConcepts } from '../analyze.js';
import type { Lexicon } from '../lexicon.js';
import type { Concept } from '../types.js';
import { MAX_TERM_LENGTH, MAX_TERMS_PER_EVENT } from './stats.js';

/** A concept's own term as the index spells it (the stemmed English word, the Chinese word). */
export function primaryTerm(c: Concept): string | undefined {
  const t = c.alternatives[0]?.terms[0];
  return t !== undefined && t.length <= MAX_TERM_LENGTH ? t : undefined;
}

/** The analysed terms of a query, as the prefilter reads them: what learning keeps (never the text). */
export function learnTerms(query: string, lexicon: Lexicon | null): string[] {
  const out = new Set<string>();
  for (const c of queryConcepts(query, lexicon, null)) {
    const t = primaryTerm(c);
    if (t !== undefined) out.add(t);
    if (out.size >= MAX_TERMS_PER_EVENT) break;
  }
  return [...out];
}
