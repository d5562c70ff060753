import { describe, expect, it } from 'vitest';
import { PrefilterIndex } from '../../../src/prefilter/index.js';
import { REGISTRY, tool } from './fixtures.js';

const index = PrefilterIndex.build(REGISTRY);
const top = (query: string, k = 5): string[] => index.search(query, { k }).map((c) => c.name);

describe('prefilter ranking: English', () => {
  it('ranks the tool the request is about first', () => {
    expect(top('what is the weather in Paris right now')[0]).toBe('weather.current');
    expect(top('will it rain next week')[0]).toBe('weather.forecast');
    expect(top('remove the old report file from the drive')[0]).toBe('files.delete');
    expect(top('where is my order 12345, what is its status')[0]).toBe('orders.status');
    expect(top('send an email to Alice about the meeting')[0]).toBe('email.send');
  });

  it('uses the words of a tool name ("module.action", snake and camel case)', () => {
    expect(top('create event')[0]).toBe('calendar.create_event');
    expect(top('stock quote for AAPL')[0]).toBe('stocks.quote');
  });

  it('tolerates a typo in a word the tools use', () => {
    expect(top('wether forecast for Berlin')[0]).toBe('weather.forecast');
    expect(top('translte this paragraph')[0]).toBe('translate.text');
  });

  it('counts authors\' examples as strong evidence', () => {
    const ix = PrefilterIndex.build([
      tool('notes.add', 'Add a note to the notebook.', { examples: ['remember to buy milk'] }),
      tool('shop.buy', 'Place an order for milk, bread and other groceries.'),
    ]);
    expect(ix.search('remember to buy milk', { k: 2 })[0]?.name).toBe('notes.add');
  });

  it('returns nothing when no tool shares a word with the query', () => {
    expect(top('zebra xylophone quantum')).toEqual([]);
  });

  it('returns at most k candidates, best first', () => {
    const res = index.search('weather forecast temperature wind humidity rain', { k: 1 });
    expect(res).toHaveLength(1);
    const three = index.search('file', { k: 3 });
    expect(three.length).toBeLessThanOrEqual(3);
    for (let i = 1; i < three.length; i++) expect(three[i - 1]!.score).toBeGreaterThanOrEqual(three[i]!.score);
  });
});

describe('prefilter ranking: a tool named outright ranks first', () => {
  it('by canonical name, even when other tools match the rest of the query better', () => {
    const res = index.search('use weather.forecast to get the current weather conditions right now', { k: 3, explain: true });
    expect(res[0]?.name).toBe('weather.forecast');
    expect(res[0]?.why?.named).toBe(true);
    expect(res[1]?.name).toBe('weather.current');
    expect(res[1]?.why?.named).toBeUndefined();
  });

  it('by provider name and by declared alias, case-insensitively', () => {
    expect(top('call files__read on the weather report')[0]).toBe('files.read');
    expect(top('sendmail: the weather is nice')[0]).toBe('email.send');
  });

  it('not when the name is a plain word people use anyway', () => {
    // "calculator" is an alias of math.calculate, "now" the name of a tool: both are just words here.
    const ix = PrefilterIndex.build([...REGISTRY, tool('now', 'Google Trends and trending searches.')]);
    const res = ix.search('what is the weather right now, and where is my calculator', { k: 3, explain: true });
    expect(res[0]?.name).toBe('weather.current');
    expect(res.some((c) => c.why?.named)).toBe(false);
    expect(ix.search('open the calculator please', { k: 1 })[0]?.name).toBe('math.calculate');
  });

  it('only on word boundaries', () => {
    // "files.reader" and "xfiles.read" do not name files.read
    expect(index.search('files.reader xfiles.read', { k: 5, explain: true }).some((c) => c.why?.named)).toBe(false);
  });

  it('never shows a filtered tool, named or not', () => {
    const filter = (name: string): boolean => name !== 'weather.current';
    const named = index.search('weather.current please', { k: 5, filter }).map((c) => c.name);
    expect(named).not.toContain('weather.current');
    const matched = index.search('weather in Paris right now', { k: 5, filter }).map((c) => c.name);
    expect(matched).not.toContain('weather.current');
    expect(matched[0]).toBe('weather.forecast');
  });
});

describe('prefilter ranking: Chinese and mixed queries', () => {
  it('finds English-only tools from Chinese queries', () => {
    expect(top('帮我删除这个文件')[0]).toBe('files.delete');
    expect(top('明天北京会下雨吗', 2)).toContain('weather.forecast');
    expect(top('查一下我的订单状态')[0]).toBe('orders.status');
    expect(top('把这段话翻译成英文')[0]).toBe('translate.text');
    expect(top('给张三发一封邮件')[0]).toBe('email.send');
  });

  it('reads traditional characters too', () => {
    expect(top('幫我刪除這個文件')[0]).toBe('files.delete');
    expect(top('查詢訂單狀態')[0]).toBe('orders.status');
  });

  it('finds Chinese-only tools from English queries', () => {
    expect(top('track my package delivery')[0]).toBe('kuaidi.track');
    expect(top('convert 100 dollars at the current exchange rate')[0]).toBe('fx.convert');
  });

  it('finds Chinese-only tools from Chinese queries', () => {
    expect(top('我的快递到哪里了')[0]).toBe('kuaidi.track');
    expect(top('人民币兑美元汇率是多少')[0]).toBe('fx.convert');
  });

  it('handles mixed-script queries', () => {
    expect(top('帮我发一封email给Alice')[0]).toBe('email.send');
    expect(top('AAPL的股票价格')[0]).toBe('stocks.quote');
    expect(top('用 weather.current 查一下上海')[0]).toBe('weather.current');
  });
});

describe('prefilter: explain', () => {
  it('lists the matched query words, with the bridge used for Chinese', () => {
    const [first] = index.search('明天的天气预报', { k: 1, explain: true });
    expect(first?.name).toBe('weather.forecast');
    expect(first?.why?.matched.some((m) => m.startsWith('天气') && m.includes('weather'))).toBe(true);

    const [en] = index.search('delete the file', { k: 1, explain: true });
    expect(en?.why?.matched).toEqual(expect.arrayContaining(['delete', 'file']));
  });

  it('leaves explanations out unless asked', () => {
    expect(index.search('delete the file', { k: 1 })[0]?.why).toBeUndefined();
  });
});

describe('prefilter: odd input', () => {
  it('answers an empty or wordless query with no candidates', () => {
    expect(index.search('', { k: 5 })).toEqual([]);
    expect(index.search('   ?!… ，。', { k: 5 })).toEqual([]);
    expect(index.search('the of and to', { k: 5 })).toEqual([]);
  });

  it('handles a 10 KB query: bounded result, a named tool still first', () => {
    const filler = 'Please read this long pasted log about weather, files and orders. '.repeat(140);
    const chinese = '这是一段很长的文字，关于天气和文件。'.repeat(60);
    const query = `${filler}${chinese} In the end, use orders.status for order 42.`;
    expect(Buffer.byteLength(query)).toBeGreaterThan(10_000);
    const res = index.search(query, { k: 5 });
    expect(res.length).toBeLessThanOrEqual(5);
    expect(res[0]?.name).toBe('orders.status');
    expect(res.every((c) => Number.isFinite(c.score))).toBe(true);
  });

  it('gives k = 0 and an empty registry nothing', () => {
    expect(index.search('weather', { k: 0 })).toEqual([]);
    const empty = PrefilterIndex.build([]);
    expect(empty.size).toBe(0);
    expect(empty.search('weather', { k: 5 })).toEqual([]);
  });

  it('recovers from a filter that throws: the next search is not polluted', () => {
    const boom = (): boolean => {
      throw new Error('boom');
    };
    expect(() => index.search('weather in Paris', { k: 5, filter: boom })).toThrow('boom');
    const after = index.search('delete the file', { k: 5 });
    expect(after[0]?.name).toBe('files.delete');
    // Exactly what an index that never saw the failed search answers: no scores left over.
    expect(after).toEqual(PrefilterIndex.build(REGISTRY).search('delete the file', { k: 5 }));
  });

  it('reports its size', () => {
    expect(index.size).toBe(REGISTRY.length);
  });

  it('ranks English without the Chinese bridge when built without a lexicon', () => {
    const plain = PrefilterIndex.build(REGISTRY, { lexicon: null });
    expect(plain.search('delete a file', { k: 1 })[0]?.name).toBe('files.delete');
    expect(plain.search('删除文件', { k: 5 })).toEqual([]);
  });
});
