import { MAX_OFFSETS, type Finding, type FindingAction, type FindingKind, type TextScan } from './types.js';

/** A [start, end) range of UTF-16 code units in a string. */
export type Span = readonly [number, number];

/** A span found by a guard, with what it is and (when redacting or defanging) what replaces it. */
export interface Hit {
  readonly start: number;
  readonly end: number;
  readonly kind: FindingKind;
  /** The replacement when the guard changes the text; undefined keeps the span as it is. */
  readonly replacement?: string;
}

export const UNCHANGED = (text: string): TextScan => ({ text, findings: [] });

/** UTF-8 length of text[from, to), lone surrogates counted as U+FFFD (3 bytes), as an encoder writes them. */
export function utf8Length(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < to && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/**
 * Findings of `hits` (sorted by start, not overlapping): one per kind, in the order the kinds first
 * appear, with at most MAX_OFFSETS UTF-8 byte offsets each. Offsets are computed in one pass up to
 * the last offset kept, so a text with many hits costs no more than one walk over it.
 */
export function findingsOf(text: string, hits: readonly Hit[], action: FindingAction): Finding[] {
  const byKind = new Map<FindingKind, { count: number; offsets: [number, number][] }>();
  let pos = 0;
  let bytes = 0;
  for (const h of hits) {
    let f = byKind.get(h.kind);
    if (f === undefined) byKind.set(h.kind, (f = { count: 0, offsets: [] }));
    f.count++;
    if (f.offsets.length >= MAX_OFFSETS) continue;
    bytes += utf8Length(text, pos, h.start);
    const start = bytes;
    bytes += utf8Length(text, h.start, h.end);
    pos = h.end;
    f.offsets.push([start, bytes]);
  }
  return [...byKind].map(([kind, f]) => ({ kind, action, count: f.count, offsets: f.offsets }));
}

/** `text` with each hit that has a replacement replaced (hits sorted by start, not overlapping). */
export function applyHits(text: string, hits: readonly Hit[]): string {
  let out = '';
  let pos = 0;
  let changed = false;
  for (const h of hits) {
    if (h.replacement === undefined) continue;
    out += text.slice(pos, h.start) + h.replacement;
    pos = h.end;
    changed = true;
  }
  return changed ? out + text.slice(pos) : text;
}

/**
 * Sorted, non-overlapping hits from candidates in any order: where two overlap, the earlier one
 * wins, and at the same start the longer one (a card number inside a longer ID is the ID).
 */
export function resolveOverlaps(hits: Hit[]): Hit[] {
  hits.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Hit[] = [];
  let end = -1;
  for (const h of hits) {
    if (h.start < end) continue;
    out.push(h);
    end = h.end;
  }
  return out;
}

/** Every match of a global regular expression, as spans of `group` (0: the whole match). */
export function* matches(re: RegExp, text: string): Generator<RegExpExecArray> {
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m[0].length === 0) re.lastIndex++;
    yield m;
  }
}

/** The scan of a guard that changes the text only when `change` is true. */
export function scanOf(text: string, hits: readonly Hit[], action: FindingAction, change: boolean): TextScan {
  if (hits.length === 0) return UNCHANGED(text);
  return { text: change ? applyHits(text, hits) : text, findings: findingsOf(text, hits, action) };
}
