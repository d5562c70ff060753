// The Porter (1980) stemmer. Chosen over an s-stemmer because tool text and queries often
// differ by derivation ("translate" / "translation" / "translator"), and dictionary senses
// used by the Chinese bridge come in all forms.

// Words Porter would merge with another word ("news" → "new") or mangle.
const EXCEPTIONS = new Map<string, string>([
  ['news', 'news'], ['data', 'data'], ['sms', 'sms'], ['gps', 'gps'], ['ios', 'ios'], ['dns', 'dns'],
  ['aws', 'aws'], ['https', 'https'], ['analytics', 'analyt'],
]);

function isCons(w: string, i: number): boolean {
  const c = w[i];
  if (c === 'a' || c === 'e' || c === 'i' || c === 'o' || c === 'u') return false;
  if (c === 'y') return i === 0 || !isCons(w, i - 1);
  return true;
}

/** m(): the number of vowel-consonant sequences in w[0..end). */
function measure(w: string, end: number): number {
  let n = 0;
  let i = 0;
  while (i < end && isCons(w, i)) i++;
  while (i < end) {
    while (i < end && !isCons(w, i)) i++;
    if (i >= end) break;
    n++;
    while (i < end && isCons(w, i)) i++;
  }
  return n;
}

function hasVowel(w: string, end: number): boolean {
  for (let i = 0; i < end; i++) if (!isCons(w, i)) return true;
  return false;
}

function doubleCons(w: string): boolean {
  const n = w.length;
  return n >= 2 && w[n - 1] === w[n - 2] && isCons(w, n - 1);
}

/** cvc at the end, where the last c is not w, x or y. */
function cvc(w: string, end: number): boolean {
  if (end < 3) return false;
  if (!isCons(w, end - 3) || isCons(w, end - 2) || !isCons(w, end - 1)) return false;
  const c = w[end - 1];
  return c !== 'w' && c !== 'x' && c !== 'y';
}

/** Replaces suffix s by r when the stem before s has measure > min. */
function swap(w: string, table: readonly (readonly [string, string])[], min: number): string {
  for (const [s, r] of table) {
    if (w.endsWith(s)) {
      const stem = w.length - s.length;
      return measure(w, stem) > min ? w.slice(0, stem) + r : w;
    }
  }
  return w;
}

const STEP2: readonly (readonly [string, string])[] = [
  ['ational', 'ate'], ['tional', 'tion'], ['enci', 'ence'], ['anci', 'ance'], ['izer', 'ize'],
  ['bli', 'ble'], ['alli', 'al'], ['entli', 'ent'], ['eli', 'e'], ['ousli', 'ous'],
  ['ization', 'ize'], ['ation', 'ate'], ['ator', 'ate'], ['alism', 'al'], ['iveness', 'ive'],
  ['fulness', 'ful'], ['ousness', 'ous'], ['aliti', 'al'], ['iviti', 'ive'], ['biliti', 'ble'], ['logi', 'log'],
];
const STEP3: readonly (readonly [string, string])[] = [
  ['icate', 'ic'], ['ative', ''], ['alize', 'al'], ['iciti', 'ic'], ['ical', 'ic'], ['ful', ''], ['ness', ''],
];
const STEP4 = ['al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'ion', 'ou',
  'ism', 'ate', 'iti', 'ous', 'ive', 'ize'];

function step1(w: string): string {
  if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('ies')) w = w.slice(0, -2);
  // Unlike Porter, keep -us and -is (status, bus, analysis, paris): they are rarely plurals.
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) w = w.slice(0, -1);

  if (w.endsWith('eed')) {
    if (measure(w, w.length - 3) > 0) w = w.slice(0, -1);
  } else {
    const suf = w.endsWith('ed') ? 2 : w.endsWith('ing') ? 3 : 0;
    if (suf > 0 && hasVowel(w, w.length - suf)) {
      w = w.slice(0, -suf);
      if (w.endsWith('at') || w.endsWith('bl') || w.endsWith('iz')) w += 'e';
      else if (doubleCons(w) && !/[lsz]$/.test(w)) w = w.slice(0, -1);
      else if (measure(w, w.length) === 1 && cvc(w, w.length)) w += 'e';
    }
  }
  if (w.endsWith('y') && hasVowel(w, w.length - 1)) w = w.slice(0, -1) + 'i';
  return w;
}

function step4(w: string): string {
  for (const s of STEP4) {
    if (!w.endsWith(s)) continue;
    const stem = w.length - s.length;
    if (measure(w, stem) <= 1) return w;
    if (s === 'ion' && !/[st]$/.test(w.slice(0, stem))) return w;
    return w.slice(0, stem);
  }
  return w;
}

function step5(w: string): string {
  if (w.endsWith('e')) {
    const m = measure(w, w.length - 1);
    if (m > 1 || (m === 1 && !cvc(w, w.length - 1))) w = w.slice(0, -1);
  }
  if (w.endsWith('ll') && measure(w, w.length) > 1) w = w.slice(0, -1);
  return w;
}

const cache = new Map<string, string>();

/** Stems one lower-case English word. */
export function stem(word: string): string {
  const hit = cache.get(word);
  if (hit !== undefined) return hit;
  let w = EXCEPTIONS.get(word);
  if (w === undefined) {
    w = word.length > 2 && /^[a-z]+$/.test(word) ? step5(step4(swap(swap(step1(word), STEP2, 0), STEP3, 0))) : word;
  }
  if (cache.size < 200_000) cache.set(word, w);
  return w;
}
