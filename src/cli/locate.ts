import { readFileSync } from 'node:fs';
import type { FileProblem, ParsedSource } from '../util/source.js';

/**
 * A problem the loader reported without a line (a name clash, a JSON syntax error) gets one where
 * the file tells it: the line of its JSON pointer, or of the character a JSON error names.
 */
export function withLine(p: FileProblem, raw: ParsedSource | undefined): FileProblem {
  if (p.line !== undefined) return p;
  let line = p.path !== '' ? raw?.lineOf(p.path) : undefined;
  const pos = /at position (\d+)/.exec(p.message)?.[1];
  if (line === undefined && pos !== undefined) {
    try {
      line = readFileSync(p.file, 'utf8').slice(0, Number(pos)).split('\n').length;
    } catch {
      // unreadable: no line
    }
  }
  return line === undefined ? p : { ...p, line };
}
