/**
 * Nesting bounds for untrusted JSON. JSON.parse takes any depth, but V8's JSON.stringify (and
 * any recursive walk) overflows the stack near 4,000 levels: the gateway refuses deeper values
 * at its edges and never walks or writes anything deeper than MAX_NESTING.
 */

/** The ceiling of every depth limit (`limits.maxArgumentDepth`, `limits.maxResultDepth`) and of audit and log copies. */
export const MAX_NESTING = 1000;

/**
 * Whether `value` nests objects and arrays more than `limit` levels deep (`{}` and `[1]` are one
 * level). Iterative, stops at the first value past the limit; a cycle counts as too deep.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (limit < 1) return true;
  const stack: object[] = [value];
  const depths: number[] = [1];
  while (stack.length > 0) {
    const v = stack.pop() as Record<string, unknown>;
    const next = (depths.pop() as number) + 1;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const x: unknown = v[i];
        if (x === null || typeof x !== 'object') continue;
        if (next > limit) return true;
        stack.push(x);
        depths.push(next);
      }
      continue;
    }
    for (const k in v) {
      const x = v[k];
      if (x === null || typeof x !== 'object') continue;
      if (next > limit) return true;
      stack.push(x);
      depths.push(next);
    }
  }
  return false;
}
