import * as crypto from 'node:crypto';
import { isFlat } from './depth.js';

type OneShot = (algorithm: string, data: string | Uint8Array, encoding: 'hex') => string;
/** `crypto.hash` (Node ≥ 20.12): one call, no Hash object; about 4× cheaper for a small input. */
const oneShot = (crypto as unknown as { hash?: OneShot }).hash;

export function sha256Hex(data: string | Uint8Array): string {
  return oneShot ? oneShot('sha256', data, 'hex') : crypto.createHash('sha256').update(data).digest('hex');
}

/**
 * JSON with object keys sorted, so equal values hash equally whatever their key order. Iterative
 * (an explicit stack: untrusted values may nest thousands of levels) and on the hot path: a flat
 * object (most arguments) takes a plain loop; otherwise parallel stacks instead of frame objects.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (!Array.isArray(value) && isFlat(value)) return flatObject(value as Record<string, unknown>);
  // Per open container: the container, its sorted keys (null for an array) and where it is. For an
  // array that is the next index; for an object, the next key's index × 2, plus 1 once a member
  // was written (members whose value is undefined are skipped, as JSON.stringify does). Pushes
  // and pops are written out in place (helper calls cost about a tenth of the walk).
  const containers: object[] = [value];
  const keyLists: (string[] | null)[] = [];
  const at: number[] = [0];
  let out: string;
  if (Array.isArray(value)) {
    keyLists.push(null);
    out = '[';
  } else {
    const keys = Object.keys(value);
    sortKeys(keys);
    keyLists.push(keys);
    out = '{';
  }
  while (containers.length > 0) {
    const top = containers.length - 1;
    const keys = keyLists[top] as string[] | null;
    const i = at[top] as number;
    let v: unknown;
    if (keys === null) {
      const arr = containers[top] as unknown[];
      if (i >= arr.length) {
        out += ']';
        containers.pop();
        keyLists.pop();
        at.pop();
        continue;
      }
      if (i > 0) out += ',';
      v = arr[i];
      at[top] = i + 1;
    } else {
      const obj = containers[top] as Record<string, unknown>;
      let k = i >> 1;
      while (k < keys.length && obj[keys[k] as string] === undefined) k++;
      if (k >= keys.length) {
        out += '}';
        containers.pop();
        keyLists.pop();
        at.pop();
        continue;
      }
      const key = keys[k] as string;
      out += (i & 1 ? ',' : '') + JSON.stringify(key) + ':';
      v = obj[key];
      at[top] = ((k + 1) << 1) | 1;
    }
    if (v === null || typeof v !== 'object') {
      out += JSON.stringify(v) ?? 'null';
      continue;
    }
    containers.push(v);
    at.push(0);
    if (Array.isArray(v)) {
      keyLists.push(null);
      out += '[';
    } else {
      const ks = Object.keys(v);
      sortKeys(ks);
      keyLists.push(ks);
      out += '{';
    }
  }
  return out;
}

/** An object whose members are all primitives. */
function flatObject(obj: Record<string, unknown>): string {
  const keys = Object.keys(obj);
  sortKeys(keys);
  let out = '{';
  let first = true;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    const v = obj[k];
    if (v === undefined) continue;
    out += (first ? '' : ',') + JSON.stringify(k) + ':' + (JSON.stringify(v) ?? 'null');
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
