/**
 * Text with its percent-escapes and JSON escapes decoded, each decoded character mapped back to
 * the span of the original it came from: a secret searched in the decoded text is found however an
 * encoder escaped it (any mix of escaped and plain characters, either hex case: Go's JSON writes
 * '&' as \u0026, Python's non-ASCII as \u00e9, PHP's '/' as \/, encoders differ on %2f and %2F),
 * and masked in the original.
 */
export interface Unescaped {
  readonly text: string;
  /** Original start and end of each UTF-16 unit of `text`. */
  readonly starts: readonly number[];
  readonly ends: readonly number[];
}

const HEX2 = /^[0-9a-fA-F]{2}$/;
const HEX4 = /^[0-9a-fA-F]{4}$/;
const JSON_SIMPLE: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** True when the text holds something to decode. */
export const hasEscapes = (text: string): boolean => text.includes('%') || text.includes('\\');

/** UTF-8 sequence length from its first byte, 0 for a byte that cannot start one. */
const seqLength = (b: number): number => (b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0);

export function unescapeMapped(src: string): Unescaped {
  let text = '';
  const starts: number[] = [];
  const ends: number[] = [];
  const emit = (s: string, from: number, to: number) => {
    text += s;
    for (let k = 0; k < s.length; k++) {
      starts.push(from);
      ends.push(to);
    }
  };
  let i = 0;
  while (i < src.length) {
    const ch = src[i] as string;
    if (ch === '%') {
      const decoded = percentAt(src, i);
      if (decoded) {
        emit(decoded.text, i, decoded.end);
        i = decoded.end;
        continue;
      }
    } else if (ch === '\\') {
      const next = src[i + 1] ?? '';
      const simple = JSON_SIMPLE[next];
      if (simple !== undefined) {
        emit(simple, i, i + 2);
        i += 2;
        continue;
      }
      const hex = src.slice(i + 2, i + 6);
      if (next === 'u' && HEX4.test(hex)) {
        emit(String.fromCharCode(parseInt(hex, 16)), i, i + 6);
        i += 6;
        continue;
      }
    }
    emit(ch, i, i + 1);
    i++;
  }
  return { text, starts, ends };
}

/** One percent-encoded UTF-8 character at `i` (1 to 4 %XX escapes), or undefined. */
function percentAt(src: string, i: number): { text: string; end: number } | undefined {
  const byte = (at: number): number | undefined => (src[at] === '%' && HEX2.test(src.slice(at + 1, at + 3)) ? parseInt(src.slice(at + 1, at + 3), 16) : undefined);
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
