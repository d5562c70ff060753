// A small Dockerfile and .dockerignore reader for static deployment checks (no Docker engine here).
// It follows the Dockerfile reference closely enough for this repository's files: `\` line
// continuations, comment lines (also inside a continuation), parser directives, exec and shell
// forms, instruction flags (`--from=x`, `--link`), ENV in both forms, and .dockerignore's
// patterns with `*`, `?`, `**` and `!`. It does not expand `$VARIABLES` or read heredocs.
import { posix } from 'node:path';

export interface Instruction {
  /** Upper-cased keyword, e.g. `COPY`. */
  readonly keyword: string;
  /** Everything after the keyword, continuations joined, trimmed. */
  readonly args: string;
  /** 1-based line where the instruction starts. */
  readonly line: number;
}

export interface Stage {
  readonly index: number;
  readonly name: string | undefined;
  /** The FROM image (or an earlier stage's name). */
  readonly image: string;
  readonly instructions: readonly Instruction[];
}

export interface Dockerfile {
  /** Instructions before the first FROM (ARG only, in a valid file). */
  readonly preamble: readonly Instruction[];
  readonly stages: readonly Stage[];
}

export interface Copy {
  readonly keyword: 'COPY' | 'ADD';
  readonly from: string | undefined;
  readonly chown: string | undefined;
  readonly sources: readonly string[];
  readonly dest: string;
  readonly line: number;
}

/** Splits a Dockerfile into instructions and stages. Throws on a line it cannot read. */
export function parseDockerfile(text: string): Dockerfile {
  const instructions: Instruction[] = [];
  const lines = text.split(/\r?\n/);
  let buffer: string[] = [];
  let startLine = 0;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] ?? '';
    const trimmed = raw.trim();
    // Comment lines (and parser directives, which look like comments) are dropped, even inside
    // a continuation; so are empty lines inside a continuation.
    if (trimmed.startsWith('#')) continue;
    if (trimmed === '') continue;
    if (buffer.length === 0) startLine = i + 1;
    const continued = /\\\s*$/.test(raw);
    buffer.push(continued ? raw.replace(/\\\s*$/, '') : raw);
    if (continued) continue;
    instructions.push(toInstruction(buffer.join(' '), startLine));
    buffer = [];
  }
  if (buffer.length > 0) instructions.push(toInstruction(buffer.join(' '), startLine));

  const preamble: Instruction[] = [];
  const stages: { index: number; name: string | undefined; image: string; instructions: Instruction[] }[] = [];
  for (const ins of instructions) {
    if (ins.keyword === 'FROM') {
      const words = shellWords(ins.args).filter((w) => !w.startsWith('--'));
      const image = words[0];
      if (image === undefined) throw new Error(`line ${ins.line}: FROM without an image`);
      let name: string | undefined;
      if (words.length >= 3 && words[1]?.toUpperCase() === 'AS') name = words[2]?.toLowerCase();
      else if (words.length !== 1) throw new Error(`line ${ins.line}: cannot read FROM ${ins.args}`);
      stages.push({ index: stages.length, name, image, instructions: [] });
      continue;
    }
    const current = stages[stages.length - 1];
    if (current === undefined) preamble.push(ins);
    else current.instructions.push(ins);
  }
  return { preamble, stages };
}

function toInstruction(joined: string, line: number): Instruction {
  const m = /^\s*([A-Za-z]+)(?:\s+([\s\S]*))?$/.exec(joined);
  if (m === null || m[1] === undefined) throw new Error(`line ${line}: cannot read instruction: ${joined.trim()}`);
  return { keyword: m[1].toUpperCase(), args: (m[2] ?? '').trim(), line };
}

/** The exec (JSON array) form of an argument string, or undefined for the shell form. */
export function execForm(args: string): string[] | undefined {
  if (!args.trimStart().startsWith('[')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return undefined; // Docker runs an unparseable "[..." through the shell too
  }
  if (!Array.isArray(parsed) || !parsed.every((x): x is string => typeof x === 'string')) return undefined;
  return parsed;
}

/** Splits like a POSIX shell would (quotes, backslash escapes), without expansion. */
export function shellWords(s: string): string[] {
  const words: string[] = [];
  let cur = '';
  let inWord = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i] ?? '';
    if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unterminated ' in: ${s}`);
      cur += s.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (c === '"') {
      i++;
      for (; i < s.length && s[i] !== '"'; i++) {
        if (s[i] === '\\' && i + 1 < s.length && '"\\$`'.includes(s[i + 1] ?? '')) i++;
        cur += s[i] ?? '';
      }
      if (i >= s.length) throw new Error(`unterminated " in: ${s}`);
      inWord = true;
    } else if (c === '\\' && i + 1 < s.length) {
      cur += s[++i] ?? '';
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(cur);
      cur = '';
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (inWord) words.push(cur);
  return words;
}

/** Leading `--name=value` / `--name` flags of an instruction, and what follows them. */
export function splitFlags(args: string): { flags: Map<string, string>; rest: string } {
  const flags = new Map<string, string>();
  let rest = args.trim();
  for (;;) {
    const m = /^--([A-Za-z-]+)(?:=(\S*))?(?:\s+|$)/.exec(rest);
    if (m === null || m[1] === undefined) break;
    flags.set(m[1].toLowerCase(), m[2] ?? 'true');
    rest = rest.slice(m[0].length);
  }
  return { flags, rest };
}

/** Reads a COPY or ADD instruction. */
export function parseCopy(ins: Instruction): Copy {
  if (ins.keyword !== 'COPY' && ins.keyword !== 'ADD') throw new Error(`line ${ins.line}: not a COPY/ADD`);
  const { flags, rest } = splitFlags(ins.args);
  const parts = execForm(rest) ?? shellWords(rest);
  if (parts.length < 2) throw new Error(`line ${ins.line}: ${ins.keyword} needs a source and a destination`);
  return {
    keyword: ins.keyword,
    from: flags.get('from'),
    chown: flags.get('chown'),
    sources: parts.slice(0, -1),
    dest: parts[parts.length - 1] ?? '',
    line: ins.line,
  };
}

/** The variables one ENV instruction sets, in `K=V ...` or the legacy `K V` form. */
export function parseEnv(args: string): Map<string, string> {
  const out = new Map<string, string>();
  const words = shellWords(args);
  const first = words[0];
  if (first === undefined) return out;
  if (!first.includes('=')) {
    out.set(first, args.trim().slice(first.length).trim());
    return out;
  }
  for (const w of words) {
    const eq = w.indexOf('=');
    if (eq <= 0) throw new Error(`ENV: cannot read '${w}' in: ${args}`);
    out.set(w.slice(0, eq), w.slice(eq + 1));
  }
  return out;
}

/** The stage a `FROM <name>` or `COPY --from=<name|index>` refers to, if any. */
export function findStage(df: Dockerfile, ref: string, before: number = df.stages.length): Stage | undefined {
  const earlier = df.stages.slice(0, before);
  if (/^\d+$/.test(ref)) return earlier[Number(ref)];
  return earlier.find((s) => s.name === ref.toLowerCase());
}

/** ENV of a stage, including what it inherits from an earlier stage it is built FROM. */
export function stageEnv(df: Dockerfile, stage: Stage): Map<string, string> {
  const parent = findStage(df, stage.image, stage.index);
  const env = parent === undefined ? new Map<string, string>() : stageEnv(df, parent);
  for (const ins of stage.instructions) if (ins.keyword === 'ENV') for (const [k, v] of parseEnv(ins.args)) env.set(k, v);
  return env;
}

/** The working directory in effect after the stage's instructions (or before instruction `upTo`). */
export function stageWorkdir(df: Dockerfile, stage: Stage, upTo: number = stage.instructions.length): string {
  const parent = findStage(df, stage.image, stage.index);
  let dir = parent === undefined ? '/' : stageWorkdir(df, parent);
  for (const ins of stage.instructions.slice(0, upTo)) {
    if (ins.keyword === 'WORKDIR') dir = posix.resolve(dir, shellWords(ins.args)[0] ?? '.');
  }
  return dir;
}

/** The last USER of a stage (inherited from an earlier stage it is built FROM), or undefined. */
export function stageUser(df: Dockerfile, stage: Stage): string | undefined {
  let user: string | undefined;
  for (const ins of stage.instructions) if (ins.keyword === 'USER') user = ins.args.trim();
  if (user !== undefined) return user;
  const parent = findStage(df, stage.image, stage.index);
  return parent === undefined ? undefined : stageUser(df, parent);
}

/**
 * Where a path of the source tree (`isDir` says what it is) lands in the image through one COPY
 * whose sources are paths of that tree, or undefined if the COPY does not carry it. `workdir` is
 * the WORKDIR in effect at the COPY. Globs in sources are not expanded.
 */
export function landsAt(copy: Copy, workdir: string, path: string, isDir: (p: string) => boolean): string | undefined {
  const dest = posix.resolve(workdir, copy.dest);
  const intoDir = copy.dest.endsWith('/') || copy.sources.length > 1;
  const target = posix.normalize(path).replace(/^\/+/, '');
  for (const raw of copy.sources) {
    const src = posix.normalize(raw).replace(/^\/+/, '').replace(/\/+$/, '');
    if (src === '.' || src === '') return posix.join(dest, target);
    if (target === src) {
      if (isDir(src)) return dest; // a directory's contents land in dest
      return intoDir ? posix.join(dest, posix.basename(src)) : dest;
    }
    if (target.startsWith(src + '/') && isDir(src)) return posix.join(dest, target.slice(src.length + 1));
  }
  return undefined;
}

export interface IgnorePattern {
  readonly negate: boolean;
  readonly regex: RegExp;
  readonly source: string;
}

/** Reads a .dockerignore: one pattern a line, `#` comments, `!` re-includes. */
export function parseDockerignore(text: string): IgnorePattern[] {
  const out: IgnorePattern[] = [];
  for (const rawLine of text.split(/\r?\n/)) {
    let line = rawLine.trim();
    if (line === '' || line.startsWith('#')) continue;
    const negate = line.startsWith('!');
    if (negate) line = line.slice(1).trim();
    const cleaned = posix.normalize(line).replace(/^\/+/, '').replace(/\/+$/, '');
    out.push({ negate, regex: globToRegex(cleaned), source: rawLine.trim() });
  }
  return out;
}

function globToRegex(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] ?? '';
    if (c === '*' && glob[i + 1] === '*') {
      i++;
      if (glob[i + 1] === '/') {
        i++;
        re += '(?:.*/)?';
      } else re += '.*';
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** Whether the build context leaves `path` out: the last pattern matching it or a parent wins. */
export function isIgnored(patterns: readonly IgnorePattern[], path: string): boolean {
  const clean = posix.normalize(path).replace(/^\/+/, '').replace(/\/+$/, '');
  const prefixes: string[] = [];
  const parts = clean.split('/');
  for (let i = 1; i <= parts.length; i++) prefixes.push(parts.slice(0, i).join('/'));
  let ignored = false;
  for (const p of patterns) if (prefixes.some((x) => p.regex.test(x))) ignored = !p.negate;
  return ignored;
}
