import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { Config } from '../config/schema.js';
import { ajvOnUse, ajvProblems, compileOnUse, createAjv } from '../util/ajv.js';
import { expandEnv, type Env } from '../util/env.js';
import { sha256Hex } from '../util/hash.js';
import type { FileProblem } from '../util/source.js';
import { compileTool } from './compile.js';
import { LITERAL_SECRET_MESSAGE, literalClientSecrets } from '../auth/upstream/spec.js';
import type { LookupAll } from '../guards/url.js';
import { isMcpServerFile, loadMcpServerFile, type McpServerEntry } from './mcp-file.js';
import { asParsedSource, parseShares, parseText, type ParseOutcome, type TextItem } from './parse-pool.js';
import { providerNameOf } from './names.js';
import { Registry } from './registry.js';
import { ToolFileSchema, type ToolFile } from './schema.js';
import type { CompiledTool } from './types.js';
import { OpenApiBook } from './openapi/book.js';
import { isDocumentValue, isOpenApiFile, looksLikeDocument, OpenApiFromFileSchema, OpenApiFromUrlSchema, type OpenApiFile } from './openapi/file-schema.js';
import { skipReason, type OpenApiSummary } from './openapi/summary.js';

export const TOOL_FILE = /^[^.~][^/]*\.(ya?ml|json)$/;

export interface LoadContext {
  readonly dir: string;
  readonly env: Env;
  /** Grows with every `${env:...}` value substituted into a tool file. */
  readonly secrets: Set<string>;
  readonly defaults: Config['defaults'];
  /** The resolver of `resolve: true` URL guards (default: the system's). */
  readonly lookup?: LookupAll;
  /** The `kind: openapi` files' documents, pins and refresh timers (a gateway keeps one; default: a fresh one per load). */
  readonly openapi?: OpenApiBook;
}

type FileResult = { tools: CompiledTool[]; problems: FileProblem[]; servers?: McpServerEntry[]; warnings?: FileProblem[]; openapi?: OpenApiSummary };

const fileValidator = createAjv().compile<ToolFile>(ToolFileSchema);
const openApiAjv = ajvOnUse();
const openApiFromFile = compileOnUse<OpenApiFile>(openApiAjv, OpenApiFromFileSchema);
const openApiFromUrl = compileOnUse<OpenApiFile>(openApiAjv, OpenApiFromUrlSchema);
const schemaAjv: Ajv2020 = createAjv();

/** Loads, validates and compiles one tools.d file. Problems never throw: they are returned. */
export function loadToolText(file: string, text: string, ctx: LoadContext): FileResult {
  const out = compileOutcome({ file, text }, parseText({ file, text }), ctx);
  if (!(out instanceof Promise)) return out;
  out.catch(() => undefined);
  return { tools: [], problems: [{ file, path: '/kind', message: 'a kind: openapi file is loaded with its tools directory' }] };
}

/** Validates and compiles one parsed file (parsed here or in a parse-pool worker); an openapi file asynchronously. */
function compileOutcome(item: TextItem, outcome: ParseOutcome, ctx: LoadContext): FileResult | Promise<FileResult> {
  if ('problems' in outcome) return { tools: [], problems: outcome.problems };
  const { file, text } = item;
  const parsed = asParsedSource(item, outcome.value);
  const value = parsed.value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { tools: [], problems: [{ file, line: 1, path: '', message: 'a tool file holds one object' }] };
  }
  if (isOpenApiFile(value)) return loadOpenApi(file, parsed.value as object, parsed.lineOf, ctx);
  // An OpenAPI document beside the files that use it (a flat ConfigMap has no subfolders): not a tool.
  if (isDocumentValue(value)) return { tools: [], problems: [] };
  if (isMcpServerFile(value)) return { tools: [], ...loadMcpServerFile(file, parsed, ctx.env, ctx.secrets) };
  const literal = literalBackendSecrets(value);
  if (literal.length > 0) return { tools: [], problems: literal.map((path) => withLine(file, path, LITERAL_SECRET_MESSAGE, parsed.lineOf)) };
  const expanded = expandEnv(value, ctx.env, ctx.secrets);
  if (!fileValidator(expanded)) return { tools: [], problems: ajvProblems(fileValidator.errors, file, parsed.lineOf) };
  const compiled = compileTool(expanded, {
    file,
    fileHash: sha256Hex(text),
    defaults: ctx.defaults,
    ajv: schemaAjv,
    lineOf: parsed.lineOf,
    ...(ctx.lookup ? { lookup: ctx.lookup } : {}),
  });
  return Array.isArray(compiled) ? { tools: [], problems: compiled } : { tools: [compiled], problems: [] };
}

/** A `kind: openapi` file: validated after `${env:}` expansion (the values become secrets), its document read or fetched. */
async function loadOpenApi(file: string, raw: object, lineOf: (p: string) => number | undefined, ctx: LoadContext): Promise<FileResult> {
  const expanded = expandEnv(raw, ctx.env, ctx.secrets);
  // Checked against the branch the file chose (url: or spec:), so problems speak of that one only.
  const check = ('url' in raw ? openApiFromUrl : openApiFromFile)();
  if (!check(expanded)) return { tools: [], problems: ajvProblems(check.errors, file, lineOf) };
  // Every auth value is a secret, even one written literally (check warns about it): masked wherever it could appear.
  for (const v of Object.values(expanded.auth ?? {})) {
    if (v.length >= 6) ctx.secrets.add(v);
    const password = v.includes(':') ? v.slice(v.indexOf(':') + 1) : '';
    if (password.length >= 6) ctx.secrets.add(password);
  }
  const book = ctx.openapi;
  if (!book) return { tools: [], problems: [{ file, path: '/kind', message: 'a kind: openapi file is loaded with its tools directory' }] };
  let out;
  try {
    const urlAsWritten = typeof (raw as { url?: unknown }).url === 'string' ? (raw as { url: string }).url : undefined;
    out = await book.load({ file, toolsDir: ctx.dir, spec: expanded, lineOf, defaults: ctx.defaults, ajv: schemaAjv, urlAsWritten, lookup: ctx.lookup });
  } catch (e) {
    // A parser bug on a hostile document must not fail the reload of every other file.
    // A stack overflow is a document nested deeper than the parser can walk: say that, not the engine's words.
    const why = e instanceof RangeError && /call stack/i.test(e.message) ? 'it is nested too deeply to parse (thousands of levels)' : e instanceof Error ? e.message : String(e);
    return { tools: [], problems: [{ file, path: '', message: `cannot import the document: ${why}` }] };
  }
  return { tools: out.tools, problems: out.problems, ...(out.summary ? { openapi: out.summary } : {}), ...(out.warnings ? { warnings: [...out.warnings] } : {}) };
}

/** Backends' client secrets written in the file (before expansion). */
function literalBackendSecrets(value: object): string[] {
  const backends = (value as { backends?: unknown }).backends;
  if (!Array.isArray(backends)) return [];
  return backends.flatMap((b: unknown, i) => (b !== null && typeof b === 'object' ? literalClientSecrets((b as { credentials?: unknown }).credentials, `/backends/${i}/credentials`) : []));
}

function withLine(file: string, path: string, message: string, lineOf: (p: string) => number | undefined): FileProblem {
  const line = lineOf(path);
  return line === undefined ? { file, path, message } : { file, line, path, message };
}

const YIELD_EVERY = 200;
const tick = () => new Promise((r) => setImmediate(r));

/**
 * Each file's tools: an unchanged file (same content hash) keeps its compiled tools, so a reload
 * parses and compiles only what changed. Reads are synchronous (a small local file costs ~10 µs
 * that way, against four thread-pool round trips async) in slices, yielding between them.
 */
async function loadFiles(files: readonly string[], ctx: LoadContext, lastGood: ReadonlyMap<string, CompiledTool[]>): Promise<FileResult[]> {
  const results: FileResult[] = [];
  const pending: Promise<void>[] = [];
  const fresh: { at: number; item: TextItem }[] = [];
  for (const [at, file] of files.entries()) {
    if (at > 0 && at % YIELD_EVERY === 0) await tick();
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      results[at] = { tools: [], problems: [{ file, path: '', message: `cannot read file: ${(e as Error).message}` }] };
      continue;
    }
    const kept = lastGood.get(file);
    const hash = kept ? sha256Hex(text) : '';
    if (kept && kept.every((t) => t.source.hash === hash)) results[at] = { tools: kept, problems: [] };
    else if (looksLikeDocument(text)) results[at] = { tools: [], problems: [] }; // not parsed as a tool file: spared for a big document
    else fresh.push({ at, item: { file, text } });
  }
  for (const share of parseShares(fresh.map((f) => f.item))) {
    const outcomes = await share.outcomes;
    for (const [k, outcome] of outcomes.entries()) {
      if (k > 0 && k % YIELD_EVERY === 0) await tick();
      const { at, item } = fresh[share.offset + k] as (typeof fresh)[number];
      const result = compileOutcome(item, outcome, ctx);
      if (result instanceof Promise) pending.push(result.then((r) => void (results[at] = r)));
      else results[at] = result;
    }
  }
  await Promise.all(pending); // openapi files: their documents read, fetched and parsed meanwhile
  return results;
}

async function listToolFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries
    .filter((e) => (e.isFile() || e.isSymbolicLink()) && TOOL_FILE.test(e.name))
    .map((e) => e.name)
    .sort();
}

/**
 * Builds the next registry generation from the whole directory. A file that fails keeps the
 * tools it had in `previous` (the last good version serves on); its problems are reported.
 */
export async function loadToolsDir(ctx: LoadContext, previous?: Registry): Promise<Registry> {
  const problems: FileProblem[] = [];
  let names: string[] = [];
  try {
    names = await listToolFiles(ctx.dir);
  } catch (e) {
    problems.push({ file: ctx.dir, path: '', message: `cannot read tools directory: ${(e as Error).message}` });
  }
  const lastGood = new Map<string, CompiledTool[]>();
  for (const t of previous?.tools ?? []) lastGood.set(t.source.file, [...(lastGood.get(t.source.file) ?? []), t]);
  const book = ctx.openapi ?? new OpenApiBook();
  const results = await loadFiles(names.map((name) => join(ctx.dir, name)), { ...ctx, openapi: book }, lastGood);
  // The state (pins, cache, timer) of an openapi file lives while it is one; a file that fails to load keeps it.
  if (ctx.openapi) ctx.openapi.retain(new Set(results.flatMap((r, i) => (r.openapi || r.problems.length > 0 ? [join(ctx.dir, names[i] as string)] : []))));
  else book.close();

  const chosen = new Map<string, CompiledTool>();
  const byProvider = new Map<string, string>();
  const previousOwner = (n: string) => previous?.get(n)?.source.file;
  // Files that owned a name in the previous generation claim it first, so a new duplicate cannot steal it.
  const ordered = results.map((r, i) => ({ r, file: join(ctx.dir, names[i] as string) }));
  const candidates = ordered.flatMap(({ r, file }) => {
    problems.push(...r.problems);
    const tools = r.problems.length > 0 ? (lastGood.get(file) ?? []) : r.tools;
    return tools.map((t) => ({ t, file }));
  });
  candidates.sort((a, b) => Number(previousOwner(b.t.name) === b.file) - Number(previousOwner(a.t.name) === a.file));
  const servers = uniqueServers(ordered, previous, problems);
  for (const { t, file } of candidates) {
    const providerName = providerNameOf(t.name);
    const clash = chosen.get(t.name)?.source.file ?? (byProvider.has(providerName) ? byProvider.get(providerName) : undefined);
    if (clash !== undefined) {
      problems.push({ file, path: '/name', message: `tool '${t.name}' clashes with the one defined in ${clash}` });
      continue;
    }
    chosen.set(t.name, t.providerName === providerName ? t : { ...t, providerName });
    byProvider.set(providerName, file);
  }
  const warnings = ordered.flatMap(({ r }) => (r.problems.length > 0 ? [] : (r.warnings ?? [])));
  // A broken openapi file shows what still serves: its last good summary.
  const openapi = ordered.flatMap(({ r, file }) => (r.problems.length > 0 ? (previous?.openapi ?? []).filter((o) => o.file === file) : r.openapi ? [r.openapi] : []));
  for (const o of openapi) warnings.push(...o.skipped.map((s) => skipWarning(o, s)));
  return new Registry((previous?.generation ?? 0) + 1, new Date().toISOString(), [...chosen.values()], problems, servers, warnings, openapi);
}

/** A skipped operation is logged (once, while it lasts) like a client config's ignored key. */
function skipWarning(o: OpenApiSummary, s: OpenApiSummary['skipped'][number]): FileProblem {
  const message = `${o.name}: operation ${s.operation || '(unknown)'} skipped: ${skipReason(s)}`;
  return s.line === undefined ? { file: s.file, path: s.path, message } : { file: s.file, line: s.line, path: s.path, message };
}

/** MCP servers of the files, names unique (a previous owner keeps its name); a failed file keeps its last good servers. */
function uniqueServers(ordered: readonly { r: FileResult; file: string }[], previous: Registry | undefined, problems: FileProblem[]): McpServerEntry[] {
  const owner = new Map((previous?.servers ?? []).map((s) => [s.spec.name, s.file]));
  const entries = ordered.flatMap(({ r, file }) => (r.problems.length > 0 ? (previous?.servers ?? []).filter((s) => s.file === file) : (r.servers ?? [])));
  entries.sort((a, b) => Number(owner.get(b.spec.name) === b.file) - Number(owner.get(a.spec.name) === a.file));
  const chosen = new Map<string, McpServerEntry>();
  for (const s of entries) {
    const other = chosen.get(s.spec.name);
    if (!other) {
      chosen.set(s.spec.name, s);
      continue;
    }
    const path = s.pointer === '' ? '/name' : s.pointer;
    const line = s.lineOf(path);
    const message = `MCP server '${s.spec.name}' clashes with the one declared in ${other.file}`;
    problems.push(line === undefined ? { file: s.file, path, message } : { file: s.file, line, path, message });
  }
  return [...chosen.values()];
}
