import { MAX_NESTING, nestsDeeperThan } from '../util/depth.js';
import { REDACTED, secretMatcher, type SecretMatcher } from './secrets.js';

export { REDACTED };
/** What a copy for the audit log or a log line holds instead of a value nested deeper than MAX_NESTING. */
export const TOO_DEEP = '[TOO DEEP]';
const INDEX = /^\d+$/;

/** A redaction path like `apiKey`, `auth.token` or `*.password`: `*` stands for any one key or index. */
export type RedactPath = readonly string[];

export function parseRedactPaths(paths: readonly string[]): RedactPath[] {
  return paths.map((p) => p.replace(/^\//, '').split(/[./]/).filter((s) => s !== ''));
}

/** A copy of `value` with the given paths replaced and every secret value masked (nesting past MAX_NESTING cut). */
export function redact(value: unknown, paths: readonly RedactPath[], secrets: ReadonlySet<string>): unknown {
  let out = scrubSecrets(value, secrets);
  for (const p of paths) out = redactPath(out, p, 0);
  return out;
}

function redactPath(value: unknown, path: RedactPath, i: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  const seg = path[i] as string;
  const last = i === path.length - 1;
  const apply = (v: unknown) => (last ? REDACTED : redactPath(v, path, i + 1));
  if (Array.isArray(value)) {
    if (seg !== '*' && !INDEX.test(seg)) return value.map((v) => redactPath(v, path, i)); // arrays are transparent
    return value.map((v, idx) => (seg === '*' || Number(seg) === idx ? apply(v) : v));
  }
  const obj = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const k of Object.keys(obj)) {
    if (seg === '*' || k === seg) {
      copy ??= { ...obj };
      copy[k] = apply(obj[k]);
    }
  }
  return copy ?? value;
}

/**
 * Masks every form of every secret (a value that came from `${env:...}`: raw, URL-encoded,
 * base64…) inside strings. The result nests at most MAX_NESTING levels (deeper values become
 * TOO_DEEP), so it can always be serialised; it is `value` itself when there was nothing to do.
 */
export function scrubSecrets<T>(value: T, secrets: ReadonlySet<string>): T {
  const matcher = secretMatcher(secrets);
  if (matcher.empty && !nestsDeeperThan(value, MAX_NESTING)) return value;
  return scrubValue(value, matcher, 0) as T;
}

function scrubValue(value: unknown, m: SecretMatcher, depth: number): unknown {
  if (typeof value === 'string') return m.mask(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_NESTING) return TOO_DEEP;
  if (Array.isArray(value)) return value.map((v: unknown) => scrubValue(v, m, depth + 1));
  if (value instanceof Error) return { type: value.name, message: m.mask(value.message), stack: m.mask(value.stack ?? '') };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = scrubValue(v, m, depth + 1);
  return out;
}

export function scrubText(text: string, secrets: ReadonlySet<string>): string {
  return secretMatcher(secrets).mask(text);
}
