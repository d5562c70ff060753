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

/**
 * Prose fields whose terms are damped when sibling tools share them. A server's authors repeat
 * their boilerplate ("requires the repo scope", "amounts are decimal strings") in every tool's
 * description and parameter docs: a term in all ten tools of a server tells the server apart, not
 * the tool, so it counts siblings^-SIBLING_DAMPING times in each (a term in one tool only, or in a
 * tool without a namespace, counts fully). Without it, one query word that hits the boilerplate
 * fills the top k with one server's tools.
 */
const SIBLING_FIELDS: readonly Field[] = ['description', 'params'];
const SIBLING_DAMPING = 0.5;
/**
 * A name word many tools share is an action ("list", "get", "create") or a vendor, not what tells
 * one tool from another: the name field counts it (tools with it in their name)^-NAME_SHARE_DAMPING
 * times. Catalogs of verb_noun names (most MCP servers) otherwise let a query's incidental verb
 * pull in every "list_…" tool at the name field's weight.
 */
const NAME_SHARE_DAMPING = 0.25;

/** A tool's namespace: its name up to the last '.', or null for a name without one. */
export function namespaceOf(name: string): string | null {
  const i = name.lastIndexOf('.');
  return i > 0 ? name.slice(0, i) : null;
}

/** For each document, term → how many tools of its namespace use the term in a SIBLING_FIELDS field. */
function siblingCounts(docs: readonly FieldBags[], groups: readonly (string | null)[]): (Map<string, number> | null)[] {
  const byGroup = new Map<string, Map<string, number>>();
  docs.forEach((d, i) => {
    const g = groups[i];
    if (g === null || g === undefined) return;
    let counts = byGroup.get(g);
    if (!counts) byGroup.set(g, (counts = new Map()));
    const terms = new Set<string>();
    for (const f of SIBLING_FIELDS) for (const t of d[f].keys()) terms.add(t);
    for (const t of terms) counts.set(t, (counts.get(t) ?? 0) + 1);
  });
  return docs.map((_, i) => {
    const g = groups[i];
    return g === null || g === undefined ? null : (byGroup.get(g) ?? null);
  });
}

/** A term's documents (ascending) and its BM25F score in each, IDF included. */
export interface Postings {
  docs: Int32Array;
  impacts: Float32Array;
}

/**
 * Turns the analysed fields of every document into scored postings. `groups`: each document's
 * namespace (see namespaceOf), for the sibling damping; omitted, no document has siblings.
 */
export function buildPostings(docs: readonly FieldBags[], groups: readonly (string | null)[] = []): Map<string, Postings> {
  const n = docs.length;
  const siblings = siblingCounts(docs, groups);
  const nameDf = new Map<string, number>();
  for (const d of docs) for (const t of d.name.keys()) nameDf.set(t, (nameDf.get(t) ?? 0) + 1);
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
    const shared = siblings[doc];
    for (const f of FIELDS) {
      const len = fieldLength(d[f]);
      const norm = FIELD_WEIGHT[f] / (1 - FIELD_B[f] + (FIELD_B[f] * len) / avg[f]);
      const damp = shared && SIBLING_FIELDS.includes(f) ? shared : null;
      for (const [term, tf] of d[f]) {
        let share = damp ? (damp.get(term) ?? 1) ** -SIBLING_DAMPING : 1;
        if (f === 'name') share *= (nameDf.get(term) ?? 1) ** -NAME_SHARE_DAMPING;
        combined.set(term, (combined.get(term) ?? 0) + tf * norm * share);
      }
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
