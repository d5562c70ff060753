import { describe, expect, it } from 'vitest';
import { queryConcepts } from '../../../src/prefilter/analyze.js';
import { contentSpans, segment } from '../../../src/prefilter/chinese.js';
import { englishTerms, splitIdentifier } from '../../../src/prefilter/english.js';
import { editDistance } from '../../../src/prefilter/fuzzy.js';
import { createLexicon, loadLexicon } from '../../../src/prefilter/lexicon.js';
import { NameMatcher, splitCompound } from '../../../src/prefilter/names.js';
import { stem } from '../../../src/prefilter/stem.js';

describe('English text', () => {
  it('stems inflections and derivations to one term', () => {
    expect(new Set(['translate', 'translation', 'translator', 'translating'].map(stem)).size).toBe(1);
    expect(stem('files')).toBe(stem('file'));
    expect(stem('searching')).toBe('search');
    expect(stem('news')).not.toBe(stem('new'));
  });

  it('drops stop words and request filler, keeps the topic', () => {
    expect(englishTerms('Could you please tell me the current weather in Paris?')).toEqual(['current', 'weather', 'paris']);
    expect(englishTerms("I'd like to send an e-mail")).toEqual(['send', 'email']);
  });

  it('splits identifiers of every common shape', () => {
    expect(splitIdentifier('getHTTPResponse')).toEqual(['get', 'http', 'response']);
    expect(splitIdentifier('weather__current')).toEqual(['weather', 'current']);
    expect(splitIdentifier('calendar.create_event')).toEqual(['calendar', 'create', 'event']);
  });

  it('splits run-together names into known words', () => {
    const known = new Set(['air', 'quality', 'forecast', 'research', 'helper']);
    expect(splitCompound('airqualityforecast', known)).toEqual(['air', 'quality', 'forecast']);
    expect(splitCompound('researchhelperx', known)).toEqual(['research', 'helper', 'x']);
    expect(splitCompound('zzzzzzzz', known)).toBeNull();
  });

  it('measures edit distance with transpositions', () => {
    expect(editDistance('wether', 'weather', 2)).toBe(1);
    expect(editDistance('calnedar', 'calendar', 2)).toBe(1);
    expect(editDistance('recent', 'rent', 1)).toBeGreaterThan(1);
  });
});

describe('Chinese text', () => {
  const lex = loadLexicon();

  it('segments a request into dictionary words', () => {
    expect(segment('帮我查一下北京明天的天气', lex)).toEqual(expect.arrayContaining(['北京', '明天', '天气']));
    // A function word does not get glued to its neighbour: 全面/的, not 全/面的 ("minibus").
    expect(segment('全面的旅行助手', lex)).toEqual(expect.arrayContaining(['全面', '旅行']));
  });

  it('drops function words and filler', () => {
    expect(contentSpans('请帮我把这个文件删除', lex).flat()).toEqual(['文件', '删除']);
  });

  it('maps traditional characters to simplified ones', () => {
    expect(lex.toSimplified('幫我刪除檔案')).toBe('帮我删除档案');
  });

  it('gives English senses, the tool-term table first', () => {
    expect(lex.senses('文件')[0]?.terms).toEqual(['file']);
    expect(lex.senses('天气')[0]?.terms).toEqual(['weather']);
    expect(lex.chineseFor('file')).toContain('文件');
  });

  it('reads a Chinese query as words with their translations', () => {
    const concepts = queryConcepts('删除文件', lex);
    expect(concepts.map((c) => c.label)).toEqual(['删除', '文件']);
    const del = concepts[0]!.alternatives.map((a) => a.terms.join(' '));
    expect(del[0]).toBe('删除');
    expect(del).toContain('delet');
  });

  it('works from a hand-built lexicon too', () => {
    const tiny = createLexicon(['天气\tweather|climate', '预报\tforecast'], { 邮件: ['email'] });
    expect(segment('天气预报邮件', tiny)).toEqual(['天气', '预报', '邮件']);
    expect(tiny.senses('邮件')[0]?.terms).toEqual(['email']);
  });
});

describe('names written out in a query', () => {
  const m = new NameMatcher([['weather.current', 'weather__current'], ['files.read', 'files__read', 'readFile'], ['天气查询']]);

  it('finds canonical, provider and alias names, case-insensitively, on boundaries', () => {
    expect(m.match('please use Weather.Current.')).toEqual([0]);
    expect(m.match('files__read then readfile')).toEqual([1]);
    expect(m.match('用天气查询看看')).toEqual([2]);
    expect(m.match('weather.currently and xfiles.read and my.files.read and files.read_all')).toEqual([]);
  });
});
