import type { FieldBags } from './analyze.js';
import { FIELDS, type Field } from './types.js';

/**
 * Field weights and length normalisation. Names, titles and authors' examples are what tells
 * tools apart; parameters and dictionary translations are weaker evidence.
 */
export const FIELD_WEIGHT: Record<Field, number> = {
  name: 3, title: 2, tags: 1.5, description: 1, examples: 2, params: 0.5, translated: 0.7,
};
const FIELD_B: Record<Field, number> = {
  name: 0.3, title: 0.5, tags: 0.5, description: 0.75, examples: 0.75, params: 0.5, translated: 0.75,
};
const K1 = 1.2;
/**
 * Length a Chinese term adds to its field. Chinese text yields about one term (word or bigram) per
 * character, twice the terms of English text saying the same, so without this a Chinese
 * description would be normalised as if it were twice as long.
 */
const CJK_TERM_LENGTH = 0.5;

function termLength(term: string): number {
  return term.charCodeAt(0) >= 0x3400 ? CJK_TERM_LENGTH : 1;
}

function fieldLength(bag: ReadonlyMap<string, number>): number {
  let len = 0;
  for (const [term, tf] of bag) len += tf * termLength(term);
  return len;
}

/** A term's documents (ascending) and its BM25F score in each, IDF included. */
export interface Postings {
  docs: Int32Array;
  impacts: Float32Array;
}

/** Turns the analysed fields of every document into scored postings. */
export function buildPostings(docs: readonly FieldBags[]): Map<string, Postings> {
  const n = docs.length;
  // Average length over the documents that have the field: a field most tools leave empty
  // (examples, translations) must not make the few that fill it look overlong.
  const avg = {} as Record<Field, number>;
  for (const f of FIELDS) {
    let total = 0;
    let filled = 0;
    for (const d of docs) {
      if (d[f].size > 0) filled++;
      total += fieldLength(d[f]);
    }
    avg[f] = filled > 0 ? total / filled : 1;
  }

  // Pseudo term frequency per (term, doc), gathered per term in document order.
  const lists = new Map<string, { docs: number[]; tfs: number[] }>();
  docs.forEach((d, doc) => {
    const combined = new Map<string, number>();
    for (const f of FIELDS) {
      const len = fieldLength(d[f]);
      const norm = FIELD_WEIGHT[f] / (1 - FIELD_B[f] + (FIELD_B[f] * len) / avg[f]);
      for (const [term, tf] of d[f]) combined.set(term, (combined.get(term) ?? 0) + tf * norm);
    }
    for (const [term, tf] of combined) {
      let list = lists.get(term);
      if (!list) {
        list = { docs: [], tfs: [] };
        lists.set(term, list);
      }
      list.docs.push(doc);
      list.tfs.push(tf);
    }
  });

  const out = new Map<string, Postings>();
  for (const [term, list] of lists) {
    const df = list.docs.length;
    const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
    const impacts = new Float32Array(df);
    list.tfs.forEach((tf, i) => {
      impacts[i] = (idf * tf * (K1 + 1)) / (K1 + tf);
    });
    out.set(term, { docs: Int32Array.from(list.docs), impacts });
  }
  return out;
}
