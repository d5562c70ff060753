import { readAssetText } from './assets.js';
import { englishTerms } from './english.js';
import { entriesFromJson, entriesFromLines, fieldValueAt, smallArray, stringAt, type Entries } from './lexicon-entries.js';

/** One English reading of a Chinese word, as index terms, in dictionary order (rank 0 first). */
export interface Sense {
  terms: readonly string[];
  rank: number;
}

/** The Chinese–English bridge: word list for segmentation, senses, and preferred Chinese words. */
export interface Lexicon {
  has(word: string): boolean;
  /** Whether the hand-made tool-term table lists the word (发, 查, 寄 are words there, not fragments). */
  inTable(word: string): boolean;
  readonly maxWordLength: number;
  /** English senses of a simplified Chinese word: the tool-term table's first, then CC-CEDICT's. */
  senses(word: string): readonly Sense[];
  /** Traditional characters mapped to simplified ones. */
  toSimplified(text: string): string;
  /** The usual Chinese words for an English index term (from the tool-term table only). */
  chineseFor(term: string): readonly string[];
  /** English synonyms of an English index term, with a strength in (0, 1]. */
  synonyms(term: string): readonly { term: string; strength: number }[];
}

const MAX_SENSES = 6;

interface ToolTermsFile {
  terms: Record<string, string[]>;
}

/**
 * Builds a lexicon from dictionary lines ("word\tsense|sense", or the shipped file's entries
 * looked up in place) and a zh→en term table.
 */
export function createLexicon(
  entries: readonly string[] | Entries,
  toolTerms: Record<string, readonly string[]>,
  t2s = '',
  synonymLines: readonly string[] = [],
): Lexicon {
  const raw = Array.isArray(entries) ? entriesFromLines(entries as readonly string[]) : (entries as Entries);
  let maxWordLength = Math.max(1, raw.maxWordLength);
  const table = new Map<string, readonly string[]>(Object.entries(toolTerms));
  const inverse = new Map<string, string[]>();
  for (const [zh, ens] of table) {
    maxWordLength = Math.max(maxWordLength, zh.length);
    for (const en of ens) {
      const terms = englishTerms(en);
      if (terms.length !== 1) continue;
      const t = terms[0] as string;
      const list = inverse.get(t) ?? [];
      if (!list.includes(zh)) list.push(zh);
      inverse.set(t, list);
    }
  }
  const t2sMap = new Map<string, string>();
  for (let i = 0; i + 1 < t2s.length; i += 2) t2sMap.set(t2s[i] as string, t2s[i + 1] as string);

  const synonyms = parseSynonyms(synonymLines);

  // Parsed lazily: a query touches a handful of the ~120k words.
  const parsed = new Map<string, readonly Sense[]>();
  const senses = (word: string): readonly Sense[] => {
    const hit = parsed.get(word);
    if (hit) return hit;
    const phrases = [...(table.get(word) ?? []), ...(raw.get(word)?.split('|') ?? [])];
    const out: Sense[] = [];
    const seen = new Set<string>();
    for (const p of phrases) {
      const terms = englishTerms(p);
      const key = terms.join(' ');
      if (terms.length === 0 || seen.has(key)) continue;
      seen.add(key);
      out.push({ terms, rank: out.length });
      if (out.length >= MAX_SENSES) break;
    }
    if (parsed.size < 100_000) parsed.set(word, out);
    return out;
  };

  return {
    has: (word) => table.has(word) || raw.has(word),
    inTable: (word) => table.has(word),
    maxWordLength,
    senses,
    toSimplified: (text) => {
      if (t2sMap.size === 0) return text;
      let out = '';
      for (const ch of text) out += t2sMap.get(ch) ?? ch;
      return out;
    },
    chineseFor: (term) => inverse.get(term) ?? [],
    synonyms: (term) => synonyms.get(term) ?? [],
  };
}

/** "word<TAB>syn:pivots syn:pivots" lines → stemmed term → synonyms; more shared pivots, stronger. */
function parseSynonyms(lines: readonly string[]): Map<string, { term: string; strength: number }[]> {
  const out = new Map<string, { term: string; strength: number }[]>();
  for (const line of lines) {
    const [word = '', rest = ''] = line.split('\t');
    const key = englishTerms(word)[0];
    if (key === undefined) continue;
    const list = out.get(key) ?? [];
    for (const item of rest.split(' ')) {
      const [syn = '', n = '0'] = item.split(':');
      const term = englishTerms(syn)[0];
      if (term === undefined || term === key || list.some((x) => x.term === term)) continue;
      list.push({ term, strength: Math.min(1, Number(n) / 4) });
    }
    if (list.length > 0) out.set(key, list);
  }
  return out;
}

let shared: Lexicon | undefined;

/**
 * The shipped lexicon, loaded once per process on first use. zh-en.json (~3 MB) stays one string
 * whose entries are looked up in place (lexicon-entries.ts), not parsed into ~120k strings.
 */
export function loadLexicon(): Lexicon {
  if (!shared) {
    const text = readAssetText('zh-en.json');
    const terms = JSON.parse(readAssetText('tool-terms.json')) as ToolTermsFile;
    const t2sAt = fieldValueAt(text, 't2s');
    if (t2sAt < 0 || text.charCodeAt(t2sAt) !== 0x22 || terms === null || typeof terms.terms !== 'object') {
      throw new Error('prefilter: data files are malformed; rebuild with `node scripts/build-lexicon.mjs`');
    }
    shared = createLexicon(entriesFromJson(text, 'entries'), terms.terms, stringAt(text, t2sAt), smallArray(text, 'synonyms'));
  }
  return shared;
}
