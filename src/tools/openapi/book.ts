import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { Config } from '../../config/schema.js';
import type { LookupAll } from '../../guards/url.js';
import { canonicalJson, sha256Hex } from '../../util/hash.js';
import { toPointer, type FileProblem } from '../../util/source.js';
import { providerNameOf } from '../names.js';
import type { CompiledTool } from '../types.js';
import { readDocument } from './document.js';
import type { OpenApiFile } from './file-schema.js';
import { compileOperation } from './compile-operation.js';
import { operationDefs, type OperationDef } from './operations.js';
import { OperationPins, type OperationChange, type ServedOperation } from './pins.js';
import { documentText, specPath, type UrlCache } from './source.js';
import type { OpenApiOperationSummary, OpenApiSummary, SkippedOperation } from './summary.js';
import { auditFindings, omittedFindings } from '../../mcp/hold-view.js';

export interface OpenApiLoadInput {
  readonly file: string;
  readonly toolsDir: string;
  /** The file after `${env:}` expansion and validation. */
  readonly spec: OpenApiFile;
  readonly lineOf: (pointer: string) => number | undefined;
  readonly defaults: Config['defaults'];
  readonly ajv: Ajv2020;
  /** `url:` as written in the file (before `${env:}` expansion): what problems and views show. */
  readonly urlAsWritten?: string | undefined;
  /** The resolver of `resolve: true` URL guards in overrides (default: the system's). */
  readonly lookup?: LookupAll | undefined;
}

/** One openapi file's outcome: `problems` stop the file (its last good tools serve on); skipped operations do not. */
export interface OpenApiLoadResult {
  tools: CompiledTool[];
  problems: FileProblem[];
  summary?: OpenApiSummary;
  /** Notes that skip nothing (logged once, like a client config's ignored keys). */
  warnings?: readonly FileProblem[];
}

interface Parsed {
  readonly docHash: string;
  readonly specHash: string;
  readonly version: string;
  readonly defs: readonly OperationDef[];
  readonly skipped: readonly SkippedOperation[];
  readonly warnings: readonly FileProblem[];
}

interface FileState {
  pins: OperationPins;
  parsed?: Parsed;
  cache?: UrlCache;
  /** Compiled tools by name, with the key they were compiled for. */
  compiled: Map<string, { key: string; tool: CompiledTool } | { key: string; problems: FileProblem[] }>;
  refresh?: { timer: NodeJS.Timeout; everyMs: number; running: boolean };
  /** The document's hash and outcome the last load saw: a refresh that changes either reloads. */
  lastHash?: string;
  lastOk?: boolean;
  /** The file as last loaded (a refresh fetches with its current url and headers). */
  spec?: OpenApiFile;
  urlAsWritten?: string | undefined;
  /** Where its `spec:` document is (missing or not: the watcher watches for it). */
  specPath?: string;
}

export interface OpenApiBookOptions {
  /** A refresh (refreshSeconds) found the document changed: the gateway reloads. */
  readonly onDocumentChange?: (file: string) => void;
  /** Definitions that changed, held or (trustChanges) accepted: the gateway audits them. */
  readonly onChanges?: (file: string, name: string, changes: readonly OperationChange[]) => void;
  readonly maxBytes?: number;
}

/**
 * The long-lived side of `kind: openapi` files: each file's parsed document (an unchanged file
 * and document are not parsed again), compiled operations, `url:` cache and refresh timer, and
 * its pins. A gateway keeps one for its life; `toolgate check` uses a fresh one.
 */
export class OpenApiBook {
  private readonly files = new Map<string, FileState>();
  private closed = false;

  constructor(private readonly opts: OpenApiBookOptions = {}) {}

  async load(input: OpenApiLoadInput): Promise<OpenApiLoadResult> {
    const { file, spec } = input;
    const state = this.stateOf(file);
    const problem = (path: string, message: string): FileProblem => {
      const line = input.lineOf(path);
      return line === undefined ? { file, path, message } : { file, line, path, message };
    };
    const { doc, cache } = await documentText(spec, { toolsDir: input.toolsDir, file, cache: state.cache, urlAsWritten: input.urlAsWritten, ...(this.opts.maxBytes ? { maxBytes: this.opts.maxBytes } : {}) });
    if (cache) state.cache = cache;
    state.spec = spec;
    state.urlAsWritten = input.urlAsWritten;
    const at = 'spec' in spec ? specPath(input.toolsDir, file, spec.spec) : undefined;
    if (at && 'path' in at) state.specPath = at.path;
    else delete state.specPath;
    this.arm(file, state, spec, input.toolsDir);
    state.lastOk = doc.ok;
    if (!doc.ok) return { tools: [], problems: [problem(doc.at, doc.message)] };
    state.lastHash = doc.hash;
    const specHash = sha256Hex(canonicalJson(spec));
    let parsed = state.parsed;
    // The document unchanged, the file edited (baseUrl, timeoutMs, auth...): the operator's own change, not held.
    const operatorOnly = parsed !== undefined && parsed.docHash === doc.hash && parsed.specHash !== specHash;
    if (parsed?.docHash !== doc.hash || parsed.specHash !== specHash) {
      const read = await readDocument(doc.text, { file: doc.source });
      if ('problems' in read) return { tools: [], problems: read.problems.map((p) => ({ ...p, file: p.file || doc.source })) };
      const ops = operationDefs(spec, read.doc, read.lineOf, { file: doc.source, refs: read.refs, specFile: file, specLineOf: input.lineOf });
      // A setting of the file that cannot be used (an auth scheme the document lacks, no server) stops the file, as a
      // schema error would; a problem inside one operation skips that operation only.
      const fatal = ops.problems.filter((p) => p.file === file || !p.path.startsWith('/paths/'));
      if (fatal.length > 0) return { tools: [], problems: fatal };
      const skipped = ops.problems.map((p) => skippedOf({ ...p, file: p.file || doc.source }));
      parsed = { docHash: doc.hash, specHash, version: read.version, defs: ops.ops, skipped, warnings: ops.warnings };
      state.parsed = parsed;
    }
    const observed = state.pins.observe(parsed.defs, spec.trustChanges ?? false, operatorOnly, spec.acceptDefinitions);
    if (observed.changes.length > 0) this.opts.onChanges?.(file, spec.name, observed.changes);
    const tools: CompiledTool[] = [];
    const skipped = [...parsed.skipped];
    const compiled = new Map<string, FileState['compiled'] extends Map<string, infer V> ? V : never>();
    for (const served of observed.served) {
      const key = `${specHash}\u0000${served.def.hash}\u0000${served.held?.newHash ?? ''}`;
      const before = state.compiled.get(served.def.name);
      const entry = before?.key === key ? before : this.compile(served, key, input, doc.hash);
      compiled.set(served.def.name, entry);
      if ('tool' in entry) tools.push(entry.tool);
      else skipped.push(...entry.problems.map((p) => ({ operation: `${served.def.method} ${served.def.path}`, tool: served.def.name, file: p.file, ...(p.line !== undefined ? { line: p.line } : {}), path: p.path, reason: p.message })));
    }
    state.compiled = compiled;
    const summary: OpenApiSummary = {
      file,
      name: spec.name,
      source: doc.source,
      ...('path' in doc && doc.path !== undefined ? { specPath: doc.path } : {}),
      version: parsed.version,
      operations: tools.map((t) => ({ tool: t.name, method: t.openapi?.method ?? '', path: t.openapi?.path ?? '', sideEffect: t.sideEffect, ...heldSummary(t) })),
      skipped,
    };
    return { tools, problems: [], summary, warnings: parsed.warnings };
  }

  /** An admin accepts the held definition of an operation; undefined when none is held. */
  accept(file: string, tool: string): OperationChange | undefined {
    return this.files.get(file)?.pins.accept(tool);
  }

  /** The `spec:` documents of the files, found or not yet (the watcher reloads when one appears or changes). */
  specPaths(): string[] {
    return [...this.files.values()].flatMap((s) => (s.specPath ? [s.specPath] : []));
  }

  /** Drops the state (pins, cache, timer) of files no longer in tools.d. */
  retain(files: ReadonlySet<string>): void {
    for (const [file, state] of this.files) {
      if (files.has(file)) continue;
      if (state.refresh) clearInterval(state.refresh.timer);
      this.files.delete(file);
    }
  }

  close(): void {
    this.closed = true;
    this.retain(new Set());
  }

  private stateOf(file: string): FileState {
    let state = this.files.get(file);
    if (!state) {
      state = { pins: new OperationPins(), compiled: new Map() };
      this.files.set(file, state);
    }
    return state;
  }

  private compile(served: ServedOperation, key: string, input: OpenApiLoadInput, docHash: string): { key: string; tool: CompiledTool } | { key: string; problems: FileProblem[] } {
    const { def, held } = served;
    const spec = input.spec;
    const overrideKey = def.overrideKey;
    const at = `/overrides${toPointer([overrideKey ?? ''])}`;
    const override = overrideKey === undefined ? undefined : spec.overrides?.[overrideKey];
    const inOverride = (path: string) => override !== undefined && (path.split('/')[1] ?? '') in override;
    let out: CompiledTool | FileProblem[];
    try {
      out = compileOperation(def, {
        file: input.file,
        fileHash: sha256Hex(`${key}\u0000${docHash}`),
        defaults: input.defaults,
        // The file's resultGuards merge by kind with the defaults and an override's, as an MCP server file's do.
        fileResultGuards: spec.resultGuards,
        ajv: input.ajv,
        lineOf: (path: string) => (inOverride(path) ? input.lineOf(at + path) : undefined),
        ...(input.lookup ? { lookup: input.lookup } : {}),
      });
    } catch (e) {
      out = [{ file: input.file, path: def.pointer, message: `cannot compile ${def.method} ${def.path}: ${e instanceof Error ? e.message : String(e)}` }];
    }
    if (Array.isArray(out)) return { key, problems: out.map((p) => (inOverride(p.path) ? { ...p, path: at + p.path } : p)) };
    const tool: CompiledTool = {
      ...out,
      providerName: out.providerName || providerNameOf(out.name),
      // Held: listed as last accepted, out of the prefilter (a model should not pick what will be refused).
      visibility: held ? { ...out.visibility, prefilter: false } : out.visibility,
      openapi: { spec: spec.name, operationId: def.operationId, method: def.method, path: def.path, hash: def.hash, ...(held ? { held } : {}) },
    };
    return { key, tool };
  }

  /** `refreshSeconds`: refetch on a timer; a changed document (or one that breaks or mends) reloads. */
  private arm(file: string, state: FileState, spec: OpenApiFile, toolsDir: string): void {
    const everyMs = 'url' in spec && spec.refreshSeconds !== undefined ? spec.refreshSeconds * 1000 : undefined;
    if (state.refresh && state.refresh.everyMs !== everyMs) {
      clearInterval(state.refresh.timer);
      delete state.refresh;
    }
    if (everyMs === undefined || state.refresh || this.closed) return;
    const refresh = { timer: setInterval(() => void this.refetch(file, state, toolsDir), everyMs), everyMs, running: false };
    refresh.timer.unref();
    state.refresh = refresh;
  }

  private async refetch(file: string, state: FileState, toolsDir: string): Promise<void> {
    const refresh = state.refresh;
    const spec = state.spec;
    if (!refresh || !spec || refresh.running || this.closed) return;
    refresh.running = true;
    try {
      const { doc, cache } = await documentText(spec, { toolsDir, file, cache: state.cache, force: true, urlAsWritten: state.urlAsWritten, ...(this.opts.maxBytes ? { maxBytes: this.opts.maxBytes } : {}) });
      if (cache) state.cache = cache;
      const changed = doc.ok !== state.lastOk || (doc.ok && doc.hash !== state.lastHash);
      if (changed && !this.closed && this.files.get(file) === state) this.opts.onDocumentChange?.(file);
    } finally {
      refresh.running = false;
    }
  }
}

/** A held operation in the summary: why, and the findings (GET /admin/openapi, `toolgate check`). */
function heldSummary(t: CompiledTool): Partial<OpenApiOperationSummary> {
  const held = t.openapi?.held;
  if (!held) return {};
  const omitted = omittedFindings(held.findings);
  return {
    held: true, heldReason: held.reason, listed: held.oldHash !== null, oldHash: held.oldHash, newHash: held.newHash,
    findings: auditFindings(held.findings), ...(omitted > 0 ? { findingsOmitted: omitted } : {}), definition: held.definition,
  };
}

function skippedOf(p: FileProblem): SkippedOperation {
  return { operation: operationOf(p.path, p.message), file: p.file, ...(p.line !== undefined ? { line: p.line } : {}), path: p.path, reason: p.message };
}

const METHOD = /^(?:get|put|post|delete|options|head|patch)$/;

/**
 * `/paths/~1pets~1{id}/get` → `GET /pets/{id}` (the operation a problem's pointer is in). A problem
 * in a path-level parameter (`/paths/~1pets~1{id}/parameters/0`) skips each operation of the path:
 * the operation is the one its message names (`GET /pets/{id}: …`), else the path alone.
 */
function operationOf(pointer: string, message: string): string {
  const m = /^\/paths\/([^/]+)(?:\/([^/]+))?/.exec(pointer);
  if (!m) return '';
  const path = (m[1] as string).replace(/~1/g, '/').replace(/~0/g, '~');
  const segment = m[2];
  if (segment !== undefined && METHOD.test(segment)) return `${segment.toUpperCase()} ${path}`;
  const named = /^([A-Z]+) (\S+): /.exec(message);
  return named && named[2] === path && METHOD.test((named[1] as string).toLowerCase()) ? `${named[1]} ${path}` : path;
}
