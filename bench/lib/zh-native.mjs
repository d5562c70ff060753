// The Chinese catalog set (issue 27.4, test/fixtures/prefilter/zh-native-*.jsonl) for bench/prefilter.mjs:
// its tools as registry entries, and the reference it is measured against, Okapi BM25 over character
// bigrams (k1 1.2, b 0.75) of the same text the prefilter sees (name, description, parameter names and docs).
import { readFileSync } from 'node:fs';

const readJsonl = (url) => readFileSync(url, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));

/** Tools and queries; `opaque` swaps the ASCII names for tool_<i>, leaving only the Chinese text. */
export function loadZhNative(root, opaque = false) {
  const raw = readJsonl(new URL('test/fixtures/prefilter/zh-native-tools.jsonl', root));
  const nameOf = new Map(raw.map((t, i) => [t.id, opaque ? `tool_${i}` : t.id]));
  const tools = raw.map((t) => {
    const name = nameOf.get(t.id);
    return { name, providerName: name.replace(/\./g, '__'), description: t.description, tags: [], examples: [], params: t.params };
  });
  const queries = readJsonl(new URL('test/fixtures/prefilter/zh-native-queries.jsonl', root))
    .map((q) => ({ query: q.query, gold: q.gold.map((g) => nameOf.get(g) ?? g) }));
  return { tools, queries };
}

/** Lower-case ASCII words, and overlapping character bigrams of each CJK run (a lone character stays). */
export function bigramWords(text) {
  const out = text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  for (const run of text.match(/[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+/g) ?? []) {
    const c = Array.from(run);
    if (c.length === 1) out.push(run);
    for (let i = 0; i + 1 < c.length; i++) out.push(c[i] + c[i + 1]);
  }
  return out;
}

/** Okapi BM25 over `bigramWords` of name + description + parameters. */
export function bigramBm25(tools) {
  const docs = tools.map((t) => {
    const text = `${t.name.replace(/[._]/g, ' ')} ${t.description} ${t.params.map((p) => `${p.name.replace(/_/g, ' ')} ${p.description ?? ''}`).join(' ')}`;
    const ws = bigramWords(text);
    const tf = new Map();
    for (const w of ws) tf.set(w, (tf.get(w) ?? 0) + 1);
    return { tf, len: ws.length };
  });
  const avg = docs.reduce((a, d) => a + d.len, 0) / docs.length;
  const df = new Map();
  for (const d of docs) for (const w of d.tf.keys()) df.set(w, (df.get(w) ?? 0) + 1);
  return {
    search(query, { k }) {
      const q = new Set(bigramWords(query));
      return docs.map((d, i) => {
        let s = 0;
        for (const w of q) {
          const tf = d.tf.get(w);
          if (!tf) continue;
          const n = df.get(w);
          s += Math.log(1 + (docs.length - n + 0.5) / (n + 0.5)) * (tf * 2.2) / (tf + 1.2 * (0.25 + 0.75 * d.len / avg));
        }
        return { name: tools[i].name, score: s };
      }).filter((x) => x.score > 0).sort((a, b) => b.score - a.score).slice(0, k);
    },
  };
}
