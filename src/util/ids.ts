import { randomFillSync } from 'node:crypto';

// One pooled buffer of entropy, refilled when used up: a call makes two ids, and a synchronous
// randomBytes() each time showed in the hot path's profile.
const POOL = Buffer.allocUnsafe(16 * 256);
let offset = POOL.length;

/** A random id with a type prefix: 128 bits, URL-safe. */
export function newId(prefix: string): string {
  if (offset + 16 > POOL.length) {
    randomFillSync(POOL);
    offset = 0;
  }
  const id = POOL.toString('base64url', offset, offset + 16);
  offset += 16;
  return `${prefix}_${id}`;
}
