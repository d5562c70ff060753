import { existsSync, realpathSync } from 'node:fs';
import { posix } from 'node:path';

/**
 * A path argument as the upstream would see it once decoded and normalized: percent-encoding is
 * undone repeatedly (so %2e%2e and %252e cannot hide a '..'), backslashes become slashes, and
 * '..' segments are resolved against the root. A NUL byte makes the path invalid.
 */
export function normalizePath(raw: string): string | undefined {
  let p = raw;
  for (let i = 0; i < 5; i++) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(p);
    } catch {
      break;
    }
    if (decoded === p) break;
    p = decoded;
  }
  if (p.includes('\0')) return undefined;
  p = p.replace(/\\/g, '/');
  return posix.resolve('/', p);
}

/** The real path when the file exists here (a symlink cannot lead out of the prefix). */
function realIfLocal(p: string): string {
  try {
    return existsSync(p) ? realpathSync(p) : p;
  } catch {
    return p;
  }
}

export function underPrefix(path: string, prefix: string): boolean {
  const pre = posix.resolve('/', prefix.replace(/\\/g, '/'));
  return path === pre || path.startsWith(pre.endsWith('/') ? pre : `${pre}/`);
}

/** True when the path, normalized (and resolved through local symlinks), stays under a prefix. */
export function pathAllowed(raw: string, prefixes: readonly string[]): boolean {
  const norm = normalizePath(raw);
  if (norm === undefined) return false;
  if (!prefixes.some((p) => underPrefix(norm, p))) return false;
  const real = realIfLocal(norm);
  return real === norm || prefixes.some((p) => underPrefix(real, realIfLocal(posix.resolve('/', p))));
}
