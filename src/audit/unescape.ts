/**
 * Text with its percent-escapes and JSON escapes decoded, each decoded character mapped back to
 * the span of the original it came from: a secret searched in the decoded text is found however an
 * encoder escaped it (any mix of escaped and plain characters, either hex case: Go's JSON writes
 * '&' as \u0026, Python's non-ASCII as \u00e9, PHP's '/' as \/, encoders differ on %2f and %2F),
 * and masked in the original.
 */
export interface Unescaped {
  readonly text: string;
  /** The original span [start, end) of the UTF-16 unit at `i` of `text`. */
  span(i: number): [number, number];
}

const JSON_SIMPLE: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const ESCAPE = /%[0-9a-fA-F]{2}|\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt])/g;

/** True when the text holds something to decode. */
export const hasEscapes = (text: string): boolean => text.includes('%') || text.includes('\\');

/** UTF-8 sequence length from its first byte, 0 for a byte that cannot start one. */
const seqLength = (b: number): number => (b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0);

/**
 * Decodes once, left to right. Memory is proportional to the escapes, not the text: each escape
 * is recorded as (decoded index, decoded length, original start, original end), and a plain
 * character's original index follows from the last escape before it.
 */
export function unescapeMapped(src: string): Unescaped {
  const parts: string[] = [];
  const events: number[] = []; // flat 4-tuples: at, len, from, to
  let pos = 0;
  let out = 0;
  ESCAPE.lastIndex = 0;
  for (let m = ESCAPE.exec(src); m !== null; m = ESCAPE.exec(src)) {
    if (m.index < pos) continue;
    const decoded = m[0].startsWith('%') ? percentAt(src, m.index) : jsonAt(m[0], m.index);
    if (!decoded) continue;
    parts.push(src.slice(pos, m.index), decoded.text);
    out += m.index - pos;
    events.push(out, decoded.text.length, m.index, decoded.end);
    out += decoded.text.length;
    pos = decoded.end;
    ESCAPE.lastIndex = decoded.end;
  }
  parts.push(src.slice(pos));
  const text = parts.join('');
  const span = (i: number): [number, number] => {
    let lo = 0;
    let hi = events.length / 4 - 1;
    let k = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if ((events[mid * 4] as number) <= i) {
        k = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (k < 0) return [i, i + 1];
    const [at, len, from, to] = events.slice(k * 4, k * 4 + 4) as [number, number, number, number];
    if (i < at + len) return [from, to];
    const o = to + (i - at - len);
    return [o, o + 1];
  };
  return { text, span };
}

function jsonAt(escape: string, i: number): { text: string; end: number } {
  const simple = JSON_SIMPLE[escape[1] as string];
  return simple !== undefined ? { text: simple, end: i + 2 } : { text: String.fromCharCode(parseInt(escape.slice(2), 16)), end: i + 6 };
}

/** One percent-encoded UTF-8 character at `i` (1 to 4 %XX escapes), or undefined. */
function percentAt(src: string, i: number): { text: string; end: number } | undefined {
  const byte = (at: number): number | undefined => (src[at] === '%' && /^[0-9a-fA-F]{2}$/.test(src.slice(at + 1, at + 3)) ? parseInt(src.slice(at + 1, at + 3), 16) : undefined);
  const first = byte(i);
  if (first === undefined) return undefined;
  const n = seqLength(first);
  if (n === 0) return undefined;
  const bytes = [first];
  for (let k = 1; k < n; k++) {
    const b = byte(i + 3 * k);
    if (b === undefined || (b & 0xc0) !== 0x80) return undefined;
    bytes.push(b);
  }
  const text = Buffer.from(bytes).toString('utf8');
  return text.includes('\ufffd') ? undefined : { text, end: i + 3 * n };
}
