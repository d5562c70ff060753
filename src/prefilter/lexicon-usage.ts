/**
 * WordNet usage figures of en-related.json, "word count modifierTenths word count ...", looked up
 * in place: the string and one offset per word (a Map of ~76k words cost ~6 MB of heap).
 */

/** Word → [general frequency, share of adjective/adverb uses in (0, 1)]. */
export interface Usage {
  has(word: string): boolean;
  get(word: string): readonly [number, number] | undefined;
}

/** The old way, for any text: a Map, a later triple for a word replacing an earlier one. */
function usageMap(text: string): Usage {
  const use = new Map<string, readonly [number, number]>();
  const u = text.split(' ');
  for (let i = 0; i + 2 < u.length; i += 3) use.set(u[i] as string, [Number(u[i + 1]), Number(u[i + 2]) / 9]);
  return use;
}

/** Offsets of each triple's word, when the text is canonical (single spaces, words strictly ascending); else null. */
function wordStarts(text: string): Uint32Array | null {
  const starts: number[] = [];
  let prev = '';
  let i = 0;
  while (i < text.length) {
    const a = text.indexOf(' ', i);
    const b = a < 0 ? -1 : text.indexOf(' ', a + 1);
    if (a <= i || b <= a + 1) return null;
    const word = text.slice(i, a);
    if (starts.length > 0 && !(prev < word)) return null;
    starts.push(i);
    prev = word;
    const c = text.indexOf(' ', b + 1);
    if (c === b + 1) return null;
    i = c < 0 ? text.length : c + 1;
    if (c < 0 && b + 1 >= text.length) return null;
  }
  return Uint32Array.from(starts);
}

/** The usage figures of a text in the format above. */
export function usageFromText(text: string): Usage {
  const starts = text.length > 0 ? wordStarts(text) : null;
  if (!starts) return usageMap(text);
  const find = (word: string): number => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = starts[mid] as number;
      const end = text.indexOf(' ', at);
      let c = 0;
      const n = Math.min(end - at, word.length);
      for (let k = 0; k < n && c === 0; k++) c = text.charCodeAt(at + k) - word.charCodeAt(k);
      if (c === 0) c = end - at - word.length;
      if (c === 0) return at;
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  };
  return {
    has: (word) => find(word) >= 0,
    get: (word) => {
      const at = find(word);
      if (at < 0) return undefined;
      const a = text.indexOf(' ', at);
      const b = text.indexOf(' ', a + 1);
      let c = text.indexOf(' ', b + 1);
      if (c < 0) c = text.length;
      return [Number(text.slice(a + 1, b)), Number(text.slice(b + 1, c)) / 9];
    },
  };
}
