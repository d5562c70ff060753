import { randomBytes } from 'node:crypto';

/** A random id with a type prefix: 128 bits, URL-safe. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(16).toString('base64url')}`;
}
