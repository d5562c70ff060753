import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
// The bench's reference ranker, so that the test and the bench measure the same baseline.
import { bigramBm25, loadZhNative } from '../../../bench/lib/zh-native.mjs';
import { chineseIndexTerms, contentSpans, segment } from '../../../src/prefilter/chinese.js';
import { PrefilterIndex, type PrefilterTool } from '../../../src/prefilter/index.js';
import { createLexicon, type Lexicon, loadLexicon } from '../../../src/prefilter/lexicon.js';
import { compoundsOf } from '../../../src/prefilter/zh-compounds.js';
import { tool } from './fixtures.js';

// The Chinese path (issue 27.4): segmentation, the compounds zh-compounds.ts adds, traditional
// characters, and the gain over BM25 on character bigrams on our own Chinese catalog.

let lex: Lexicon;
beforeAll(() => {
  lex = loadLexicon();
});

describe('segmentation', () => {
  it('prefers a one-character word of the tool-term table over a fragment that makes a wrong word', () => {
    // 张/经/理发 ("haircut") was the old reading of "give manager Zhang an email".
    const words = segment('给张经理发封邮件', lex);
    expect(words).toEqual(expect.arrayContaining(['经理', '发', '邮件']));
    expect(words).not.toContain('理发');
    expect(segment('出差的打车票', lex)).toEqual(expect.arrayContaining(['出差', '打车', '票']));
  });

  it('keeps the earlier readings: words over characters, function words split off', () => {
    expect(segment('帮我查一下北京明天的天气', lex)).toEqual(expect.arrayContaining(['北京', '明天', '天气']));
    expect(segment('全面的旅行助手', lex)).toEqual(expect.arrayContaining(['全面', '旅行']));
  });

  it('falls back to bigrams for a name the lexicon lacks', () => {
    // 飞书 (a product) is in no dictionary: its characters split, and the index keeps the bigram.
    const spans = contentSpans('新建飞书表格', lex);
    expect(spans.flat()).toContain('表格');
    expect(chineseIndexTerms(spans)).toContain('飞书');
  });

  it('leaves simplified characters alone when mapping traditional ones', () => {
    expect(lex.toSimplified('身份证 二等座 什么 著名 覆盖')).toBe('身份证 二等座 什么 著名 覆盖');
    expect(lex.toSimplified('這個資料')).toBe('这个资料');
  });
});

describe('lone characters read as the compounds of the index', () => {
  const tools: PrefilterTool[] = [
    tool('traffic.realtime', '查看城市道路的实时路况和拥堵指数，提示事故和交通管制。'),
    tool('weather.forecast', '获取未来七天的天气预报，包含气温和降水概率。'),
    tool('shop.refund', '为订单申请退款或退货，填写原因并上传凭证。'),
    tool('shop.search', '在电商平台搜索商品，按价格和销量筛选。'),
    tool('map.route', '规划两地之间的出行路线，返回距离和预计耗时。'),
  ];
  let on: PrefilterIndex;
  let off: PrefilterIndex;
  beforeAll(() => {
    on = PrefilterIndex.build(tools, { lexicon: lex });
    off = PrefilterIndex.build(tools, { lexicon: lex, chineseReadings: false });
  });

  it('reads a colloquial one-character verb as the compound the description uses (堵 → 拥堵)', () => {
    const [first] = on.search('二环现在堵不堵', { k: 3, explain: true });
    expect(first?.name).toBe('traffic.realtime');
    expect(first?.why?.matched).toContain('堵→拥堵');
    expect(off.search('二环现在堵不堵', { k: 3 }).map((c) => c.name)).not.toContain('traffic.realtime');
  });

  it('finds the refund tool for "I want to send it back" (退 → 退款)', () => {
    const [first, second] = on.search('衣服不合适，我要退', { k: 3, explain: true });
    expect(first?.name).toBe('shop.refund');
    expect(first?.why?.matched).toContain('退→退款');
    // Without the compound, 退 reaches it only through its dictionary senses: a far thinner lead.
    const [a, b] = off.search('衣服不合适，我要退', { k: 3 });
    expect((first?.score ?? 0) / (second?.score ?? 1)).toBeGreaterThan(((a?.score ?? 0) / (b?.score ?? 1)) * 1.5);
  });

  it('gives nothing for function words alone, and survives a 10 KB run of characters', () => {
    expect(on.search('的了吗呢吧', { k: 5 })).toEqual([]);
    const long = '退堵的'.repeat(3400);
    const got = on.search(long, { k: 5 });
    expect(got.length).toBeLessThanOrEqual(5);
    expect(got.map((c) => c.name)).toEqual(expect.arrayContaining(['traffic.realtime', 'shop.refund']));
  });

  it('does not expand a function word or a character found in too many words', () => {
    const tiny = createLexicon(
      Array.from({ length: 41 }, (_, i) => `${String.fromCharCode(0x4e00 + i)}子\tx`).concat(['退款\trefund']),
      {},
    );
    const postings = new Map(
      Array.from({ length: 41 }, (_, i) => `${String.fromCharCode(0x4e00 + i)}子`).concat(['退款', '的确']).map((t) => [t, { docs: Int32Array.of(0), impacts: Float32Array.of(1) }]),
    );
    expect(compoundsOf('子', tiny, postings)).toEqual([]);
    expect(compoundsOf('的', tiny, postings)).toEqual([]);
    expect(compoundsOf('退', tiny, postings).map((a) => a.terms)).toEqual([['退款']]);
  });
});

describe('Chinese catalog: gain over BM25 on character bigrams', () => {
  // test/fixtures/prefilter/zh-native-*.jsonl: 187 Chinese-described tools, 203 Chinese requests.
  const root = new URL('../../../', import.meta.url);
  const recall = (ix: { search(q: string, o: { k: number }): { name: string }[] }, queries: { query: string; gold: string[] }[]): number =>
    queries.filter((q) => ix.search(q.query, { k: 5 }).some((c) => q.gold.includes(c.name))).length / queries.length;

  it('has the set the bench measures: 150+ tools with parameter docs, 100+ queries with known gold tools', () => {
    const { tools, queries } = loadZhNative(root);
    expect(tools.length).toBeGreaterThanOrEqual(150);
    expect(queries.length).toBeGreaterThanOrEqual(100);
    const names = new Set(tools.map((t) => t.name));
    for (const q of queries) for (const g of q.gold) expect(names.has(g)).toBe(true);
    expect(readFileSync(new URL('test/fixtures/prefilter/README.md', root), 'utf8')).toContain('zh-native-queries.jsonl');
  });

  for (const opaque of [false, true]) {
    it(`recall@5 is at least 0.08 above bigram BM25${opaque ? ', with opaque names' : ''} (measured +0.14 / +0.17)`, () => {
      const { tools, queries } = loadZhNative(root, opaque);
      const base = recall(bigramBm25(tools), queries);
      const ours = recall(PrefilterIndex.build(tools, { lexicon: lex }), queries);
      const without = recall(PrefilterIndex.build(tools, { lexicon: lex, chineseReadings: false }), queries);
      expect(ours - base).toBeGreaterThanOrEqual(0.08);
      expect(ours).toBeGreaterThanOrEqual(without);
    });
  }
});
