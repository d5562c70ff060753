import { pointerSegments } from './source.js';

/** A tool-file reference to an argument: `path`, `a.b`, or a JSON pointer `/a/b`. */
export function argSegments(ref: string): string[] {
  return ref.startsWith('/') ? pointerSegments(ref) : ref.split('.');
}

export function argAt(args: unknown, segments: readonly string[]): unknown {
  let cur = args;
  for (const s of segments) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, s)) return undefined;
    cur = (cur as Record<string, unknown>)[s];
  }
  return cur;
}
