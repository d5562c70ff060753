import { stem } from './stem.js';

// Function words plus the conversational filler of requests ("can you please help me ...").
// Kept general: nothing here is about any tool domain.
const STOP = new Set(`a about above after again against all also am an and any are aren't as at be because been
before being below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
during each either etc few for from further had hadn't has hasn't have haven't having he her here hers herself him
himself his how however i i'd i'll i'm i've if in into is isn't it it's its itself just let let's like may me might
mine more most must mustn't my myself need needs no nor not now of off often on once one only or other ought our
ours ourselves out over own per please pls rather really same shall she should shouldn't so some such than that
that's the their theirs them themselves then there there's these they they're this those though through thus to
too under until up upon us very via want wanted wants was wasn't we we'd we'll we're we've were weren't what what's
whatever when where where's whether which while who who's whom whose why will with within without won't would
wouldn't yet you you'd you'll you're you've your yours yourself yourselves hi hello hey thanks thank ok okay kindly
something anything someone somebody everything there thing things way ways lot lots much many able`.split(/\s+/));

// General filler of verbose requests (in the spirit of the SMART stop list): adverbs, hedges and
// vague verbs and adjectives that say how to ask, not what about. Nothing domain-specific.
const FILLER = `according accordingly actually almost already always another anyone anyway anywhere appreciate
appropriate around available away become becomes becoming certain certainly clearly consider considering
currently definitely described despite different else elsewhere enough entirely especially even ever every
exactly far following furthermore given gives giving hardly hence hopefully immediately indeed instead
lately later least less likely mainly maybe meanwhile merely moreover mostly namely nearly necessary neither
never nevertheless nobody none normally nothing obviously otherwise overall particular particularly perhaps
possible possibly presumably probably provide provides provided providing quite reasonably regarding
regardless relatively respectively seem seemed seems several since somehow sometime sometimes somewhat
somewhere soon sorry specific specifically still sure therefore thereby thorough thoroughly throughout
together toward towards truly try trying unfortunately unless unlikely usually various whenever whereas
wherever whoever whole willing wish wonder wondering yes include includes including included also
detailed details detail comprehensive effectively efficiently accurately relevant suitable appropriate
interested interest assist assistance tell give know looking wondering`.split(/\s+/);
for (const w of FILLER) STOP.add(w);

export function isStopWord(word: string): boolean {
  return STOP.has(word);
}

// Words: ASCII letters/digits, with inner apostrophes ("don't") so they hit the stop list.
const WORD = /[A-Za-z0-9]+(?:['’][A-Za-z]+)*/g;

/** Splits an identifier into its parts: "getHTTPResponse", "weather__current", "send-email.v2". */
export function splitIdentifier(id: string): string[] {
  return id
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((p) => p.length > 0);
}

/**
 * Lower-case words of ASCII text, in order. A one-letter prefix is joined to what follows
 * ("e-mail" → "email") since it is almost never a word on its own.
 */
export function englishWords(text: string, keepCase = false): string[] {
  const out: string[] = [];
  const joined = text.replace(/\b([A-Za-z])-(?=[A-Za-z]{2})/g, '$1');
  for (const m of joined.matchAll(WORD)) {
    const w = m[0].replace(/’/g, "'");
    out.push(keepCase ? w : w.toLowerCase());
  }
  return out;
}

/** Index/query term of one lower-case word, or null for stop words and noise. */
export function termOf(word: string): string | null {
  if (word.length < 2 && !/[0-9]/.test(word)) return null;
  if (STOP.has(word)) return null;
  if (word.includes("'")) {
    const base = word.slice(0, word.indexOf("'"));
    return base.length < 2 || STOP.has(base) ? null : stem(base);
  }
  return stem(word);
}

/** Terms of English text (stop words dropped, stemmed). */
export function englishTerms(text: string): string[] {
  const out: string[] = [];
  for (const w of englishWords(text)) {
    const t = termOf(w);
    if (t !== null) out.push(t);
  }
  return out;
}
