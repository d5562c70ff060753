import { LineCounter, parseDocument, isNode, type Document } from 'yaml';

/** A problem found in one file, reported to operators as file:line: path: message. */
export interface FileProblem {
  file: string;
  line?: number;
  /** JSON pointer into the file's document ('' for the whole file). */
  path: string;
  message: string;
}

/** A parsed YAML or JSON file that can map a JSON pointer back to its line. */
export interface ParsedSource {
  value: unknown;
  lineOf(pointer: string): number | undefined;
}

export class SourceError extends Error {
  constructor(readonly problems: FileProblem[]) {
    super(problems.map(formatProblem).join('\n'));
    this.name = 'SourceError';
  }
}

export function formatProblem(p: FileProblem): string {
  return `${p.file}${p.line ? `:${p.line}` : ''}: ${p.path || '/'}: ${p.message}`;
}

export function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** One JSON-pointer segment, escaped (RFC 6901: `~` as `~0`, `/` as `~1`). */
export function pointerSegment(segment: string | number): string {
  return String(segment).replace(/~/g, '~0').replace(/\//g, '~1');
}

export function toPointer(segments: readonly (string | number)[]): string {
  return segments.map((s) => '/' + pointerSegment(s)).join('');
}

/**
 * Parses YAML, or JSON when the file name ends in .json (JSON is checked strictly first, so
 * trailing commas and comments are errors there). Positions come from the YAML parser for both.
 */
export function parseSource(text: string, file: string): ParsedSource {
  if (file.endsWith('.json')) {
    try {
      JSON.parse(text);
    } catch (e) {
      throw new SourceError([{ file, path: '', message: `invalid JSON: ${(e as Error).message}` }]);
    }
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new SourceError(
      doc.errors.map((err) => ({
        file,
        line: lineCounter.linePos(err.pos[0]).line,
        path: '',
        message: err.message.split('\n')[0] ?? 'parse error',
      })),
    );
  }
  return {
    value: doc.toJS({ maxAliasCount: 100 }),
    lineOf: (pointer) => lineOfPointer(doc, lineCounter, pointer),
  };
}

function lineOfPointer(doc: Document, lc: LineCounter, pointer: string): number | undefined {
  const segs = pointerSegments(pointer);
  // Walk up to the deepest node that exists (a missing property points at its parent).
  for (let n = segs.length; n >= 0; n--) {
    const node: unknown = n === 0 ? doc.contents : doc.getIn(segs.slice(0, n).map(asKey), true);
    if (isNode(node) && node.range) return lc.linePos(node.range[0]).line;
  }
  return undefined;
}

function asKey(s: string): string | number {
  return /^(0|[1-9]\d*)$/.test(s) ? Number(s) : s;
}
