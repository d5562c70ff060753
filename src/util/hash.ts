import * as crypto from 'node:crypto';

type OneShot = (algorithm: string, data: string | Uint8Array, encoding: 'hex') => string;
/** `crypto.hash` (Node ≥ 20.12): one call, no Hash object; about 4× cheaper for a small input. */
const oneShot = (crypto as unknown as { hash?: OneShot }).hash;

export function sha256Hex(data: string | Uint8Array): string {
  return oneShot ? oneShot('sha256', data, 'hex') : crypto.createHash('sha256').update(data).digest('hex');
}

/** JSON with object keys sorted, so equal values hash equally whatever their key order. Hot path: plain loops, no intermediate arrays. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return out + ']';
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  sortKeys(keys);
  let out = '{';
  let first = true;
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue;
    out += (first ? '' : ',') + JSON.stringify(k) + ':' + canonicalJson(v);
    first = false;
  }
  return out + '}';
}

/** Sorts in place by UTF-16 code units, like the default sort; insertion sort for the few keys of an argument object (no temporary array). */
function sortKeys(keys: string[]): void {
  if (keys.length > 16) {
    keys.sort();
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > k) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = k;
  }
}

export function digest(value: unknown): string {
  return 'sha256:' + sha256Hex(canonicalJson(value));
}

/** The hash of a response as the gateway built it (its key order is ours, so no canonical form is needed). */
export function responseDigest(value: unknown): string {
  return 'sha256:' + sha256Hex(JSON.stringify(value) ?? 'null');
}
