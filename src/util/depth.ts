/**
 * Nesting bounds for untrusted JSON. JSON.parse takes any depth, but V8's JSON.stringify (and
 * any recursive walk) overflows the stack near 4,000 levels: the gateway refuses deeper values
 * at its edges and never walks or writes anything deeper than MAX_NESTING.
 */

/** The ceiling of every depth limit (`limits.maxArgumentDepth`, `limits.maxResultDepth`) and of audit and log copies. */
export const MAX_NESTING = 1000;

/**
 * Whether `value` nests objects and arrays more than `limit` levels deep (`{}` and `[1]` are one
 * level); a cycle counts as too deep. The walk recurses at most `limit` levels (a limit above
 * MAX_NESTING is taken as MAX_NESTING: deeper is too deep for the gateway anyway), so it never
 * overflows the stack, and it stops at the first value past the limit.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  return deeper(value, Math.min(limit, MAX_NESTING) - 1);
}

/** Whether `v` holds containers more than `left` levels below it. */
function deeper(v: object, left: number): boolean {
  if (left < 0) return true;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (x !== null && typeof x === 'object' && (left === 0 || deeper(x, left - 1))) return true;
    }
    return false;
  }
  const obj = v as Record<string, unknown>;
  for (const k in obj) {
    const x = obj[k];
    if (x !== null && typeof x === 'object' && (left === 0 || deeper(x, left - 1))) return true;
  }
  return false;
}

/** An object or array none of whose members is an object or array. */
export function isFlat(value: object): boolean {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const x: unknown = value[i];
      if (x !== null && typeof x === 'object') return false;
    }
    return true;
  }
  const obj = value as Record<string, unknown>;
  for (const k in obj) {
    const x = obj[k];
    if (x !== null && typeof x === 'object') return false;
  }
  return true;
}
