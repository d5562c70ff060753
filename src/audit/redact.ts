export const REDACTED = '[REDACTED]';
const INDEX = /^\d+$/;

/** A redaction path like `apiKey`, `auth.token` or `*.password`: `*` stands for any one key or index. */
export type RedactPath = readonly string[];

export function parseRedactPaths(paths: readonly string[]): RedactPath[] {
  return paths.map((p) => p.replace(/^\//, '').split(/[./]/).filter((s) => s !== ''));
}

/** A copy of `value` with the given paths replaced and every secret value masked. */
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

/** Masks every occurrence of a secret (a value that came from `${env:...}`) inside strings. */
export function scrubSecrets<T>(value: T, secrets: ReadonlySet<string>): T {
  if (secrets.size === 0) return value;
  if (typeof value === 'string') return scrubText(value, secrets) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => scrubSecrets(v, secrets)) as T;
  if (value instanceof Error) {
    return { type: value.name, message: scrubText(value.message, secrets), stack: scrubText(value.stack ?? '', secrets) } as T;
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = scrubSecrets(v, secrets);
    return out as T;
  }
  return value;
}

export function scrubText(text: string, secrets: ReadonlySet<string>): string {
  let out = text;
  for (const s of secrets) {
    // Very short values (e.g. "1", "true") would mask ordinary text; they are not secrets.
    if (s.length >= 6 && out.includes(s)) out = out.split(s).join(REDACTED);
  }
  return out;
}
