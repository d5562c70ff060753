import { lstat, readlink } from 'node:fs/promises';
import { posix } from 'node:path';
import { isWellFormed } from '../util/unicode.js';

/** How the upstream reads a path argument; the guard judges that reading and nothing else. */
export interface PathReading {
  /** The upstream percent-decodes the value once before using it as a path (e.g. it puts it in a URL). */
  readonly percentDecoded: boolean;
  /** The upstream takes a backslash for a separator too (Windows-style); else a backslash is refused. */
  readonly backslashSeparator: boolean;
  /** The directory a relative path is resolved against (the upstream's working directory). */
  readonly relativeTo: string;
}

export const LINUX_READING: PathReading = { percentDecoded: false, backslashSeparator: false, relativeTo: '/' };

/** Linux follows at most 40 symbolic links in one lookup, then fails with ELOOP. */
const MAX_LINKS = 40;
/** Linux's PATH_MAX: a longer path fails with ENAMETOOLONG anyway, and bounds the walk below. */
const PATH_MAX = 4096;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const BAD_ESCAPE = /%(?![0-9a-fA-F]{2})/;
const ENCODED_SEPARATOR = /%(2f|5c)/i;

type Reading = { readonly path: string } | { readonly problem: string };
/** The lexical reading, and the same path unnormalized: the kernel applies '..' after following links. */
type Read = { readonly path: string; readonly walk: string } | { readonly problem: string };

/**
 * The path the upstream's file system will be asked for, lexically normalized, or why the value
 * has more than one reading. Without `percentDecoded` a '%' is refused outright: the guard cannot
 * know whether something downstream decodes it, and a value whose decoded and raw forms name
 * different files has no single meaning to judge. With it, the value is decoded once and the
 * result must hold no '%' (a second level of encoding) and no encoded separator.
 */
export function readPath(raw: string, how: PathReading = LINUX_READING): Read {
  if (raw.length > PATH_MAX) return { problem: `the path is longer than ${PATH_MAX} characters` };
  if (!isWellFormed(raw)) return { problem: 'the path is not well-formed Unicode' };
  if (CONTROL.test(raw)) return { problem: 'the path holds a control character (NUL included)' };
  let p = raw;
  if (how.percentDecoded) {
    if (BAD_ESCAPE.test(p)) return { problem: "the path holds an invalid percent-escape (a '%' not followed by two hex digits)" };
    if (ENCODED_SEPARATOR.test(p)) return { problem: 'the path holds an encoded separator (%2f or %5c)' };
    try {
      p = decodeURIComponent(p);
    } catch {
      return { problem: 'the path holds percent-escapes that are not UTF-8' };
    }
    if (CONTROL.test(p)) return { problem: 'the path holds an encoded control character (%00 included)' };
    if (p.includes('%')) return { problem: "the path is percent-encoded twice (%25): the upstream decodes once, so a '%' would remain" };
  } else if (p.includes('%')) {
    return { problem: "the path holds a '%': percent-escapes are refused unless the tool's guard says the upstream decodes them (percentDecoded: true)" };
  }
  if (p.includes('\\')) {
    if (!how.backslashSeparator) return { problem: 'the path holds a backslash: a separator on Windows, a file name character on Linux' };
    p = p.replace(/\\/g, '/');
  }
  // Where '\\' is a separator (Windows), 'C:\\x' and 'C:x' name another drive and 'f:s' a stream.
  if (how.backslashSeparator && p.includes(':')) return { problem: "the path holds a ':' (a drive letter or a stream where '\\' is a separator)" };
  if (p === '') return { problem: 'the path is empty' };
  if (p.startsWith('/')) return { path: posix.normalize(`/${p}`).replace(/(.)\/$/, '$1'), walk: p };
  // A relative path: the kernel clamps '..' at the root, not at the working directory.
  const base = posix.resolve('/', how.relativeTo);
  const parts = base === '/' ? [] : base.slice(1).split('/');
  const floor = parts.length;
  for (const c of p.split('/')) {
    if (c === '' || c === '.') continue;
    if (c !== '..') parts.push(c);
    else if (parts.length > floor) parts.pop();
    else return { problem: `the relative path climbs above ${base}` };
  }
  return { path: `/${parts.join('/')}`, walk: `${base}/${p}` };
}

/** The lexical reading with the default (Linux) rules, or undefined when the value is ambiguous. */
export function normalizePath(raw: string): string | undefined {
  const r = readPath(raw);
  return 'path' in r ? r.path : undefined;
}

export function underPrefix(path: string, prefix: string): boolean {
  const pre = posix.resolve('/', prefix);
  return path === pre || path.startsWith(pre.endsWith('/') ? pre : `${pre}/`);
}

/**
 * Where an absolute, normalized path really lands on this host, resolved the way the kernel does:
 * component by component, each existing symbolic link followed (a dangling one too: its target is
 * where a write would create the file), '..' applied to the real path so far (after a link, the
 * parent of its target). Components that do not exist are taken as they are written.
 */
export async function landing(abs: string): Promise<Reading> {
  const real: string[] = [];
  const todo = abs.split('/').filter((c) => c !== '');
  let links = 0;
  for (let c = todo.shift(); c !== undefined; c = todo.shift()) {
    if (c === '.') continue;
    if (c === '..') {
      real.pop();
      continue;
    }
    const here = `/${[...real, c].join('/')}`;
    let isLink: boolean;
    try {
      isLink = (await lstat(here)).isSymbolicLink();
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        real.push(c);
        continue;
      }
      return { problem: `the path cannot be checked (${code ?? 'error'})` };
    }
    if (!isLink) {
      real.push(c);
      continue;
    }
    if (++links > MAX_LINKS) return { problem: 'the path goes through too many symbolic links (a loop)' };
    let target: string;
    try {
      target = await readlink(here);
    } catch (e) {
      return { problem: `the path cannot be checked (${(e as NodeJS.ErrnoException).code ?? 'error'})` };
    }
    if (target.startsWith('/')) real.length = 0;
    todo.unshift(...target.split('/').filter((t) => t !== ''));
  }
  return { path: `/${real.join('/')}` };
}

/**
 * Why a path argument is refused, or undefined: it has one reading (above), that reading is under
 * a prefix as written, and where it really lands (symlinks followed) is under a prefix's own real
 * location.
 */
export async function pathProblem(raw: string, prefixes: readonly string[], how: PathReading = LINUX_READING): Promise<string | undefined> {
  const read = readPath(raw, how);
  if ('problem' in read) return read.problem;
  if (!prefixes.some((p) => underPrefix(read.path, p))) return 'the path leaves the allowed directories';
  const landed = await landing(read.walk);
  if ('problem' in landed) return landed.problem;
  for (const p of prefixes) {
    const realPrefix = await landing(posix.resolve('/', p));
    if ('path' in realPrefix && underPrefix(landed.path, realPrefix.path)) return undefined;
  }
  return 'the path leads out of the allowed directories through a symbolic link';
}
