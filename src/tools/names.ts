import { sha256Hex } from '../util/hash.js';

const PROVIDER_MAX = 64;

/**
 * The name a tool goes by with OpenAI and Anthropic, whose names allow [A-Za-z0-9_-]{1,64}
 * but no dots: '.' becomes '__'; a long name is cut and given a hash suffix to stay unique.
 */
export function providerNameOf(name: string): string {
  const flat = name.replaceAll('.', '__');
  if (flat.length <= PROVIDER_MAX) return flat;
  return `${flat.slice(0, PROVIDER_MAX - 9)}_${sha256Hex(name).slice(0, 8)}`;
}

/** Up to `max` names close to `wanted` (edit distance, with a bonus for shared parts). */
export function closeNames(wanted: string, names: Iterable<string>, max = 3): string[] {
  const w = wanted.toLowerCase();
  const scored: [string, number][] = [];
  for (const n of names) {
    const d = editDistance(w, n.toLowerCase());
    const limit = Math.max(2, Math.floor(Math.max(w.length, n.length) * 0.4));
    const partHit = n.split(/[._-]/).some((p) => p.length > 2 && w.includes(p));
    if (d <= limit || partHit) scored.push([n, d - (partHit ? 2 : 0)]);
  }
  return scored.sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0])).slice(0, max).map(([n]) => n);
}

function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}
