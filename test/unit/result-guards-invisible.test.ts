import { describe, expect, it } from 'vitest';
import { scanInvisible } from '../../src/guards/result/invisible.js';

/** "hi" in Unicode tag characters (U+E0068 U+E0069): invisible, read by models as text. */
const TAGS = String.fromCodePoint(0xe0068, 0xe0069);

describe('invisible-character guard', () => {
  it('strips tag characters, zero-width and bidi controls; counts characters, reports runs', () => {
    const text = `a${TAGS}b\u200bc\u202ed\u2066e`;
    const r = scanInvisible(text, 'strip');
    expect(r.text).toBe('abcde');
    expect(r.findings).toEqual([{ kind: 'invisible', action: 'strip', count: 5, offsets: [[1, 9], [10, 13], [14, 17], [18, 21]] }]);
  });

  it('keeps a byte-order mark at the start, strips one elsewhere', () => {
    expect(scanInvisible('\ufeffhello', 'strip').findings).toEqual([]);
    expect(scanInvisible('hel\ufefflo', 'strip').text).toBe('hello');
  });

  it('keeps the joiner inside emoji sequences (family, skin tone, VS16), strips it between letters', () => {
    for (const emoji of ['👨\u200d👩\u200d👧', '👩🏽\u200d💻', '🏳️\u200d🌈']) expect(scanInvisible(`x ${emoji} y`, 'strip').findings).toEqual([]);
    expect(scanInvisible('pass\u200dword', 'strip').text).toBe('password');
  });

  it('strips runs of variation selectors (data smuggled one byte per selector), keeps the single one of an emoji', () => {
    const smuggled = '😀' + [0xfe01, 0xfe0e, 0xe0110, 0xe01ef].map((c) => String.fromCodePoint(c)).join('');
    const r = scanInvisible(`a${smuggled}b`, 'strip');
    expect(r.text).toBe('a😀b');
    expect(r.findings[0]?.count).toBe(4);
    for (const ok of ['❤️ ok', '1️⃣', '☺︎', '葛\u{E0100}城']) expect(scanInvisible(ok, 'strip').findings, ok).toEqual([]);
  });

  it('flag and refuse leave the text', () => {
    expect(scanInvisible(`a${TAGS}`, 'flag')).toEqual({ text: `a${TAGS}`, findings: [{ kind: 'invisible', action: 'flag', count: 2, offsets: [[1, 9]] }] });
    expect(scanInvisible(`a${TAGS}`, 'refuse').findings[0]?.action).toBe('refuse');
  });

  it('ordinary text, Chinese and lone surrogates are not invisible characters', () => {
    expect(scanInvisible('普通的中文文本。 café — “quotes”', 'strip').findings).toEqual([]);
    expect(scanInvisible('broken \ud800 surrogate \udc00', 'strip').findings).toEqual([]);
  });

  it('returns on hostile input', () => {
    expect(scanInvisible('\u200b'.repeat(1 << 20), 'strip').text).toBe('');
    expect(scanInvisible(TAGS.repeat(1 << 18), 'strip').text).toBe('');
    expect(scanInvisible('\u200d'.repeat(1 << 20), 'strip').text).toBe('');
  });
});
