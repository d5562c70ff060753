import type { Filesystem } from '@scalar/openapi-parser';
import { pruneUnread } from './prune.js';
import { parseSource, pointerSegments, SourceError, type FileProblem } from '../../util/source.js';

/**
 * Reads an OpenAPI document with @scalar/openapi-parser. Chosen over @apidevtools/swagger-parser
 * and @readme/openapi-parser because one maintained, pure-JS package (no install scripts) does the
 * things we need: its upgrader turns Swagger 2.0 into OpenAPI 3.0 (body and formData parameters,
 * collectionFormat, host and basePath), it dereferences with circular $refs kept as shared
 * objects, and it never reads a file or the network unless given a plugin (we give none: a remote
 * $ref stays unresolved and its operations are skipped). Its 3.0 → 3.1 upgrade is not used: it
 * rewrites a property *named* `example` as if it were the keyword (Kubernetes' JSONSchemaProps);
 * the 3.0 schema keywords (nullable, example, boolean exclusiveMinimum) are translated where the
 * schemas are written out (schema-convert.ts), which knows a keyword from a property name. Its
 * validator is not used either: real documents break the meta-schema in ways that do not matter
 * for calling them; each operation is checked for what its tool needs instead.
 * Version 0.24 is the newest that supports Node 20 (later ones need Node 22).
 */

export type OpenApiVersion = '2.0' | '3.0' | '3.1';

/** The parser and upgrader (~4 MB of RSS), imported when a first OpenAPI document is read: a gateway without one never loads them. */
let scalar: Promise<[typeof import('@scalar/openapi-parser'), typeof import('@scalar/openapi-upgrader/2.0-to-3.0')]> | undefined;
const loadScalar = (): NonNullable<typeof scalar> =>
  (scalar ??= Promise.all([import('@scalar/openapi-parser'), import('@scalar/openapi-upgrader/2.0-to-3.0')]));

/** A dereferenced OpenAPI 3.0 or 3.1 document (Swagger 2.0 upgraded to 3.0). May contain cycles: walk it with a visited set. */
export type OpenApiDocument = Readonly<Record<string, unknown>>;

export interface ReadDocument {
  readonly doc: OpenApiDocument;
  /** Line in the original text of a JSON pointer into the document (the nearest existing parent for a pointer the upgrade made). */
  lineOf(pointer: string): number | undefined;
  /** The version the document was written in. */
  readonly version: OpenApiVersion;
  /**
   * Where each dereferenced `$ref` site now is (the object that held the `$ref`, its keys now
   * the target's), with the reference it held: recursive schemas are written back as `$defs`.
   */
  readonly refs: ReadonlyMap<object, string>;
}

/** Parses, upgrades and dereferences one document; `problems` when it cannot be used at all. */
export async function readDocument(text: string, source: { file: string }): Promise<ReadDocument | { problems: FileProblem[] }> {
  const { file } = source;
  const parsed = parse(text, file);
  if ('problems' in parsed) return parsed;
  const { value, lineOf } = parsed;
  const problem = (path: string, message: string): { problems: FileProblem[] } => {
    const line = lineOf(path);
    return { problems: [line === undefined ? { file, path, message } : { file, line, path, message }] };
  };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return problem('', 'an OpenAPI document holds one object');
  const raw = value as Record<string, unknown>;
  const version = versionOf(raw);
  if (!version) {
    return 'swagger' in raw || 'openapi' in raw
      ? problem('openapi' in raw ? '/openapi' : '/swagger', `unsupported version ${JSON.stringify(raw['openapi'] ?? raw['swagger'])}: OpenAPI 3.0, 3.1 or Swagger 2.0 expected`)
      : problem('', 'not an OpenAPI document: neither an "openapi" nor a "swagger" version field');
  }
  const paths = raw['paths'];
  if (paths !== undefined && (paths === null || typeof paths !== 'object' || Array.isArray(paths))) return problem('/paths', 'paths must be an object');

  const [{ dereference }, { upgradeFromTwoToThree }] = await loadScalar();
  let upgraded: unknown;
  try {
    upgraded = version === '2.0' ? upgradeFromTwoToThree(raw) : raw;
  } catch (e) {
    return problem('', `the Swagger 2.0 document could not be upgraded to OpenAPI 3.0: ${(e as Error).message}`);
  }
  if (upgraded !== null && typeof upgraded === 'object' && !Array.isArray(upgraded)) pruneUnread(upgraded as Record<string, unknown>, text);
  const refs = new Map<object, string>();
  // For speed: the document goes in as a one-file filesystem whose list of references to other
  // files is empty (none is followed), so the parser does not walk the whole document first to
  // list them: ~150-200 ms of CPU off the 13 MB GitHub document's first import.
  const files: Filesystem = [{ isEntrypoint: true, specification: upgraded as Record<string, unknown>, filename: file, dir: './', references: [] }];
  const result = dereference(files, { onDereference: ({ schema, ref }) => void refs.set(schema, ref) });
  const loops = (result.errors ?? []).filter((e) => e.code === 'SELF_REFERENCE');
  if (loops.length > 0) return problem('', loops.map((e) => e.message).join('; '));
  const doc = result.schema;
  if (doc === null || typeof doc !== 'object') return problem('', 'the document is empty');
  return { doc: doc as OpenApiDocument, lineOf, version, refs };
}

function versionOf(raw: Record<string, unknown>): OpenApiVersion | undefined {
  const oa = raw['openapi'];
  if (typeof oa === 'string') return /^3\.0(\.|$)/.test(oa) ? '3.0' : /^3\.1(\.|$)/.test(oa) ? '3.1' : undefined;
  return raw['swagger'] === '2.0' ? '2.0' : undefined;
}

type Parsed = { value: unknown; lineOf: (pointer: string) => number | undefined } | { problems: FileProblem[] };

/**
 * JSON is parsed with JSON.parse (fast for large documents) and its lines are found only when a
 * problem asks, by jsonLineFinder (the YAML parser would take seconds and hundreds of MB on a
 * 10 MB document); YAML goes through the tool files' parser.
 */
function parse(text: string, file: string): Parsed {
  if (/^\s*[{[]/.test(text)) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      const message = (e as Error).message;
      const at = /position (\d+)/.exec(message);
      const line = at ? text.slice(0, Number(at[1])).split('\n').length : undefined;
      return { problems: [{ file, ...(line !== undefined ? { line } : {}), path: '', message: `invalid JSON: ${message}` }] };
    }
    return { value, lineOf: jsonLineFinder(text) };
  }
  try {
    return parseSource(text, yamlName(file));
  } catch (e) {
    if (e instanceof SourceError) return { problems: e.problems.map((p) => ({ ...p, file, message: p.message.startsWith('invalid') ? p.message : `invalid YAML: ${p.message}` })) };
    throw e;
  }
}

/** Pointers deeper than this get the line of their nearest parent at this depth (as they always have). */
const MAX_LINE_DEPTH = 6;

/** A container of the text: its members' key offsets and value offsets (objects), or its items' offsets (arrays). */
type Members = Map<string, { key: number; value: number }> | number[];

/**
 * Lines (1-based) of pointers into a JSON text that JSON.parse accepted: a property's line is its
 * key's, an array item's its first character's; a pointer that does not exist gets its nearest
 * parent's. For speed, the text is not indexed whole: each container on a pointer's way is read
 * once, its members found by skipping their values bracket to bracket, and kept for the next
 * lookup. Indexing every value with jsonc-parser's visitor cost ~300 ms of the 13 MB GitHub
 * document's import (and ~150 ms of Kubernetes' 4 MB) when a few warnings asked for a line; the
 * first lookup now costs ~10 ms, the next ones ~0.1 ms.
 */
function jsonLineFinder(text: string): (pointer: string) => number | undefined {
  const containers = new Map<number, Members>();
  let newlines: number[] | undefined;
  const lineAt = (offset: number): number => {
    if (newlines === undefined) {
      newlines = [];
      for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', nl + 1)) newlines.push(nl);
    }
    let lo = 0;
    let hi = newlines.length; // count the newlines before offset
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((newlines[mid] as number) < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo + 1;
  };
  const membersOf = (at: number): Members | undefined => {
    const known = containers.get(at);
    if (known !== undefined) return known;
    const open = text[at];
    if (open !== '{' && open !== '[') return undefined;
    let i = skipSpace(text, at + 1);
    let members: Members;
    if (open === '{') {
      const keys = new Map<string, { key: number; value: number }>();
      while (text[i] === '"') {
        const end = stringEnd(text, i);
        const raw = text.slice(i + 1, end - 1);
        const name = raw.includes('\\') ? (JSON.parse(text.slice(i, end)) as string) : raw;
        const value = skipSpace(text, skipSpace(text, end) + 1); // past the colon
        keys.set(name, { key: i, value }); // a duplicate key: the last wins, as in JSON.parse
        i = skipSpace(text, valueEnd(text, value));
        if (text[i] === ',') i = skipSpace(text, i + 1);
      }
      members = keys;
    } else {
      const items: number[] = [];
      while (i < text.length && text[i] !== ']') {
        items.push(i);
        i = skipSpace(text, valueEnd(text, i));
        if (text[i] === ',') i = skipSpace(text, i + 1);
      }
      members = items;
    }
    containers.set(at, members);
    return members;
  };
  return (pointer) => {
    let value = skipSpace(text, 0);
    let found = value;
    for (const seg of pointerSegments(pointer).slice(0, MAX_LINE_DEPTH)) {
      const members = membersOf(value);
      if (members === undefined) break;
      if (Array.isArray(members)) {
        const item = /^(0|[1-9]\d*)$/.test(seg) ? members[Number(seg)] : undefined;
        if (item === undefined) break;
        found = value = item;
      } else {
        const member = members.get(seg);
        if (member === undefined) break;
        found = member.key;
        value = member.value;
      }
    }
    return lineAt(found);
  };
}

const SPACE = /[ \t\n\r]*/y;
function skipSpace(text: string, i: number): number {
  SPACE.lastIndex = i;
  SPACE.test(text);
  return SPACE.lastIndex;
}

/** Index after the string whose opening quote is at `i`. */
function stringEnd(text: string, i: number): number {
  let q = text.indexOf('"', i + 1);
  for (;;) {
    if (q === -1) return text.length;
    let back = 0;
    while (text.charCodeAt(q - 1 - back) === 92) back++; // backslashes before the quote
    if (back % 2 === 0) return q + 1;
    q = text.indexOf('"', q + 1);
  }
}

const STRUCTURE = /[{}[\]"]/g;
const LITERAL_END = /[,}\]\s]/g;
/** Index after the value starting at `i`. */
function valueEnd(text: string, i: number): number {
  const c = text[i];
  if (c === '"') return stringEnd(text, i);
  if (c !== '{' && c !== '[') {
    LITERAL_END.lastIndex = i;
    return LITERAL_END.exec(text)?.index ?? text.length;
  }
  let depth = 0;
  STRUCTURE.lastIndex = i;
  for (let m = STRUCTURE.exec(text); m !== null; m = STRUCTURE.exec(text)) {
    const ch = m[0];
    if (ch === '"') STRUCTURE.lastIndex = stringEnd(text, m.index);
    else if (ch === '{' || ch === '[') depth++;
    else if (--depth === 0) return m.index + 1;
  }
  return text.length;
}

/** parseSource reads a name ending in .json as strict JSON; everything here that is not JSON text is YAML. */
function yamlName(file: string): string {
  return file.endsWith('.json') ? `${file}.yaml` : file;
}
