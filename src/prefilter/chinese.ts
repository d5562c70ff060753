import type { Lexicon } from './lexicon.js';

/** Runs of CJK ideographs (Unified, Extension A, Compatibility). */
export const CJK_RUN = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+/g;

export function hasCjk(text: string): boolean {
  return /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/.test(text);
}

// Function words and request filler. Matched against whole segmented words only,
// so 上传 or 使用说明 are never touched by 上 or 使用.
const STOP = new Set(`的 地 得 了 着 过 吗 呢 吧 啊 呀 哦 嘛 么 哈 啦 喔 嗯 之 其 此 与 和 跟 及 或 或者 以及 还是 并 并且
而 而且 但 但是 就 都 也 还 又 再 才 很 太 最 更 挺 非常 特别 我 你 您 他 她 它 我们 你们 他们 她们 咱们 大家
自己 这 那 这个 那个 这些 那些 这里 那里 这样 那样 哪 哪个 哪些 哪里 哪儿 什么 怎么 怎样 怎么样 如何 为什么 多少 几
是 在 有 没 没有 不 别 会 能 能够 可以 可能 可不可以 能不能 要 想 想要 需要 应该 得到 请 请问 帮 帮我 帮忙 麻烦 给 给我
让 把 被 将 对 对于 关于 从 到 向 往 在于 为 为了 因为 所以 如果 一下 一个 一些 一点 一点儿 个 些 点 下 里 中 上面
用 使用 通过 利用 看看 看一下 试试 告诉 告诉我 知道 了解 一 啥 吗 呗 谢谢 你好 您好 可 能否 是否 时候 的话`.split(/\s+/));

export function isChineseStopWord(word: string): boolean {
  return STOP.has(word);
}

// Segmentation costs, in integers so that equal costs compare equal: a word of two or more
// characters 5, a lone character 6, or 5 when it is a word of its own (a function word such as
// 的, or a one-character word of the tool-term table such as 发, 查, 算).
const WORD_COST = 5;
const FREE_CHAR_COST = 5;
const CHAR_COST = 6;

/**
 * Segments a run of simplified Chinese into words by dynamic programming: fewest pieces,
 * lexicon words of two or more characters preferred over lone characters, and a lone character
 * that is a word of its own preferred over one that is not: 张/经理/发/封 (发 "send"), not
 * 张/经/理发/封 (理发 "haircut"). Runs the lexicon does not cover fall apart into characters; the
 * index's bigrams (chineseIndexTerms) and a long word's bigrams (queryConcepts) cover those.
 */
export function segment(run: string, lex: Lexicon): string[] {
  const chars = Array.from(run);
  const n = chars.length;
  const cost = new Float64Array(n + 1).fill(Infinity);
  const back = new Int32Array(n + 1);
  cost[0] = 0;
  for (let i = 0; i < n; i++) {
    const base = cost[i] as number;
    if (base === Infinity) continue;
    // Single character: always possible, dearer than a word so that words win ties, unless it
    // is a function word (的, 了, 和): "全面/的" beats "全/面的".
    const ch = chars[i] as string;
    const single = base + (STOP.has(ch) || lex.inTable(ch) ? FREE_CHAR_COST : CHAR_COST);
    if (single < (cost[i + 1] as number)) {
      cost[i + 1] = single;
      back[i + 1] = i;
    }
    let piece = chars[i] as string;
    for (let j = i + 2; j <= Math.min(n, i + lex.maxWordLength); j++) {
      piece += chars[j - 1] as string;
      if (!lex.has(piece)) continue;
      if (base + WORD_COST < (cost[j] as number)) {
        cost[j] = base + WORD_COST;
        back[j] = i;
      }
    }
  }
  const words: string[] = [];
  for (let j = n; j > 0; j = back[j] as number) words.push(chars.slice(back[j] as number, j).join(''));
  return words.reverse();
}

/** Segments, then groups the content words into spans separated by stop words. */
export function contentSpans(run: string, lex: Lexicon): string[][] {
  const spans: string[][] = [];
  let cur: string[] = [];
  for (const w of segment(run, lex)) {
    if (STOP.has(w)) {
      if (cur.length > 0) spans.push(cur);
      cur = [];
    } else {
      cur.push(w);
    }
  }
  if (cur.length > 0) spans.push(cur);
  return spans;
}

/** Character bigrams of a string. */
export function bigrams(text: string): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) out.push((chars[i] as string) + (chars[i + 1] as string));
  return out;
}

/**
 * Index terms of Chinese text: every content word that is not two characters long, plus all
 * bigrams inside each content span (a two-character word is its own bigram). Bigrams let a
 * query match part of a longer word, or text that was segmented differently.
 */
export function chineseIndexTerms(spans: readonly (readonly string[])[]): string[] {
  const out: string[] = [];
  for (const span of spans) {
    for (const w of span) if (w.length !== 2) out.push(w);
    out.push(...bigrams(span.join('')));
  }
  return out;
}
