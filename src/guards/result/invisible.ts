import { scanOf, UNCHANGED, type Hit } from './text.js';
import type { TextGuard, TextScan } from './types.js';

export type InvisibleAction = 'strip' | 'flag' | 'refuse';

/**
 * Characters that render as nothing yet reach the model: the Unicode tags block (U+E0000–E007F,
 * "ASCII smuggling"), zero-width space, non-joiner and joiner (U+200B–U+200D), word joiner and the
 * invisible operators (U+2060–U+2064), the byte-order mark anywhere but at the start (U+FEFF), and
 * the bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069, "Trojan Source"),
 * the bidi marks (U+200E, U+200F, U+061C) and the other blanks that split a token unseen: soft
 * hyphen U+00AD, combining grapheme joiner U+034F, Mongolian vowel separator U+180E, Hangul fillers
 * U+3164 and U+FFA0.
 * A run of them is one span. Also runs of two or more variation selectors (U+FE00–FE0F,
 * U+E0100–E01EF): text never has two in a row, while "emoji smuggling" hides one byte in each.
 * Character classes only: linear in the text.
 */
const INVISIBLE = /(?:[\u00AD\u034F\u061C\u180E\u200B-\u200F\u2060-\u2064\u202A-\u202E\u2066-\u2069\u3164\uFEFF\uFFA0]|\uDB40[\uDC00-\uDC7F])+|(?:[\uFE00-\uFE0F]|\uDB40[\uDD00-\uDDEF]){2,}/g;
const ANY = /[\u00AD\u034F\u061C\u180E\u200B-\u200F\u2060-\u2064\u202A-\u202E\u2066-\u2069\u3164\uFEFF\uFFA0\uDB40]|[\uFE00-\uFE0F]{2}/;
const PICTOGRAPHIC = /\p{Extended_Pictographic}/u;
/** A lone ZWJ between two pictographs (👨‍👩‍👧) is part of an emoji, not hidden text. */
function emojiJoiner(text: string, start: number, end: number): boolean {
  if (end - start !== 1 || text.charCodeAt(start) !== 0x200d) return false;
  let i = start;
  // Step back over VS16 and skin-tone modifiers (U+1F3FB–1F3FF) to the pictograph they modify.
  for (;;) {
    if (i > 0 && text.charCodeAt(i - 1) === 0xfe0f) i--;
    else if (i > 1 && text.charCodeAt(i - 2) === 0xd83c && text.charCodeAt(i - 1) >= 0xdffb && text.charCodeAt(i - 1) <= 0xdfff) i -= 2;
    else break;
  }
  if (i === 0 || end >= text.length) return false;
  const pair = i >= 2 && (text.charCodeAt(i - 1) & 0xfc00) === 0xdc00;
  const before = text.slice(pair ? i - 2 : i - 1, i);
  const after = String.fromCodePoint(text.codePointAt(end) ?? 0);
  return PICTOGRAPHIC.test(before) && PICTOGRAPHIC.test(after);
}

/** Counts code points in a run (a tag character is two UTF-16 units). */
function codePoints(text: string, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) if ((text.charCodeAt(i) & 0xfc00) !== 0xdc00) n++;
  return n;
}

export function scanInvisible(text: string, action: InvisibleAction): TextScan {
  if (!ANY.test(text)) return UNCHANGED(text);
  const hits: Hit[] = [];
  let count = 0;
  INVISIBLE.lastIndex = 0;
  for (let m = INVISIBLE.exec(text); m !== null; m = INVISIBLE.exec(text)) {
    let start = m.index;
    const end = start + m[0].length;
    if (start === 0 && text.charCodeAt(0) === 0xfeff) start = 1; // a byte-order mark at the start is just that
    if (start === end || emojiJoiner(text, start, end)) continue;
    hits.push({ start, end, kind: 'invisible', replacement: '' });
    count += codePoints(text, start, end);
  }
  const scan = scanOf(text, hits, action, action === 'strip');
  // The count is of characters (a run of 40 tag characters hides 40 letters), the offsets of runs.
  return { text: scan.text, findings: scan.findings.map((f) => ({ ...f, count })) };
}

export const invisibleGuard = (action: InvisibleAction): TextGuard => ({
  name: 'invisible',
  scan: (text) => scanInvisible(text, action),
});
