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

/** A copy of `args` with the value at `segments` replaced (the objects on the way copied, the rest shared). */
export function withArgAt(args: Readonly<Record<string, unknown>>, segments: readonly string[], value: unknown): Record<string, unknown> {
  const [head, ...rest] = segments;
  if (head === undefined) return args as Record<string, unknown>;
  const inner = args[head];
  const next = rest.length === 0 ? value : withArgAt(inner !== null && typeof inner === 'object' ? (inner as Record<string, unknown>) : {}, rest, value);
  return Array.isArray(args) ? Object.assign([...(args as unknown[])], { [head]: next }) : { ...args, [head]: next };
}
