import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { Tool } from '@modelcontextprotocol/client';
import { globToRegExp } from '../auth/caller.js';
import type { Config } from '../config/schema.js';
import { compileTool } from '../tools/compile.js';
import type { McpServerEntry } from '../tools/mcp-file.js';
import type { McpServerFile, ToolOverride } from '../tools/mcp-server-schema.js';
import { providerNameOf } from '../tools/names.js';
import type { SideEffectValue, ToolFile } from '../tools/schema.js';
import type { CompiledTool } from '../tools/types.js';
import { sha256Hex } from '../util/hash.js';
import { toPointer, type FileProblem } from '../util/source.js';
import type { ListedTool } from './pins.js';
import type { PassthroughNames } from './passthrough.js';

export interface ImportContext {
  readonly defaults: Config['defaults'];
  readonly ajv: Ajv2020;
}

export interface ImportResult {
  tools: CompiledTool[];
  problems: FileProblem[];
}

const LOCAL_MAX = 64;

/**
 * The registry's name segment for a server's tool: `[a-z0-9_-]` only (camelCase becomes
 * snake_case, anything else `_`), at most 64 characters (a long name is cut and given a hash).
 */
export function localToolName(mcpName: string): string {
  const flat = mcpName
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '_')
    .replace(/^_+|_+$/g, '');
  const base = flat === '' ? 'tool' : flat;
  return base.length <= LOCAL_MAX ? base : `${base.slice(0, LOCAL_MAX - 9)}_${sha256Hex(mcpName).slice(0, 8)}`;
}

/** The registry name of a server's tool: `<prefix>.<local>`, the prefix the server's name unless the file sets one (`""`: none). */
export function importedToolName(spec: Pick<McpServerFile, 'name' | 'prefix'>, local: string): string {
  const prefix = spec.prefix ?? spec.name;
  return prefix === '' ? local : `${prefix}.${local}`;
}

/** The include/exclude globs of the server file, on the tool's name as the server gives it. */
function selected(spec: McpServerFile, mcpName: string): boolean {
  const matches = (globs: readonly string[] | undefined) => (globs ?? []).some((g) => globToRegExp(g).test(mcpName));
  return (spec.include === undefined || matches(spec.include)) && !matches(spec.exclude);
}

/** The behaviour hints of a tool's annotations (the same in every revision). */
interface Hints {
  readonly readOnlyHint?: boolean | undefined;
  readonly destructiveHint?: boolean | undefined;
  readonly openWorldHint?: boolean | undefined;
  readonly idempotentHint?: boolean | undefined;
}

/**
 * Defaults from MCP annotations. `readOnlyHint: true` → read and idempotent, whatever else it
 * says; otherwise a missing hint takes the MCP default (destructive, open world), so an
 * unannotated tool is gated. `idempotentHint` sets idempotent; `known` says whether any hint did.
 */
export function annotationDefaults(def: { readonly annotations?: Hints | undefined }): { sideEffect: SideEffectValue; idempotent: boolean; known: boolean } {
  const a = def.annotations ?? {};
  if (a.readOnlyHint === true) return { sideEffect: 'read', idempotent: true, known: true };
  const sideEffect = (a.destructiveHint ?? true) ? 'destructive' : (a.openWorldHint ?? true) ? 'external' : 'write';
  return { sideEffect, idempotent: a.idempotentHint === true, known: a.idempotentHint !== undefined };
}

/** The dialect toolgate validates schemas in (ajv's 2020 build); MCP's default since 2025-11-25 (SEP-1613). */
const DIALECT_2020_12 = /^https:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/;

/**
 * A server's schema as toolgate lists and validates it. One that declares draft 2020-12 is kept
 * as the server wrote it, `$schema` included (SEP-1613: clients see the dialect, `$defs` and
 * `additionalProperties` unchanged). Any other `$schema` (servers often say draft-07) is dropped:
 * ajv 2020 knows no other meta-schema (it throws `no schema with key or ref`), so the schema is
 * validated as 2020-12, which reads the common keywords alike, and is listed without a dialect,
 * which MCP reads as 2020-12: what toolgate lists is what it enforces. Pins hash the server's own
 * definition (pins.ts), so keeping or dropping `$schema` here moves no pin.
 */
export function gatewaySchema(schema: Record<string, unknown>): Record<string, unknown> {
  const dialect = schema['$schema'];
  if (dialect === undefined || (typeof dialect === 'string' && DIALECT_2020_12.test(dialect))) return schema;
  const { $schema: _other, ...rest } = schema;
  return rest;
}

/** The tool file an imported tool would have: annotations set the defaults, the override wins. */
function syntheticFile(spec: McpServerFile, def: Tool, name: string, override: ToolOverride | undefined): ToolFile {
  const base = annotationDefaults(def);
  // An override that names a side effect takes that side effect's idempotent default, unless a hint said otherwise.
  const idempotent = override?.sideEffect !== undefined && !base.known ? {} : { idempotent: base.idempotent };
  const title = def.title ?? def.annotations?.title;
  const description = def.description?.trim() || title || `Tool '${def.name}' of MCP server '${spec.name}'.`;
  return {
    name,
    description,
    ...(title !== undefined ? { title } : {}),
    inputSchema: gatewaySchema(def.inputSchema),
    ...(def.outputSchema ? { outputSchema: gatewaySchema(def.outputSchema) } : {}),
    sideEffect: base.sideEffect,
    ...idempotent,
    ...(spec.timeoutMs !== undefined ? { timeoutMs: spec.timeoutMs } : {}),
    ...override,
    backends: [{ id: spec.name, mcp: { server: spec.name, tool: def.name } }],
  };
}

/**
 * A server's listed tools as registry tools named `<server>.<tool>`, each compiled like a tool
 * file. A tool that does not compile (a bad override, an unusable schema) is left out and
 * reported against the server's file; the others are imported.
 */
export function importServerTools(entry: McpServerEntry, listed: readonly ListedTool[], ctx: ImportContext): ImportResult {
  const { spec } = entry;
  const tools: CompiledTool[] = [];
  const problems: FileProblem[] = [];
  const owners = new Map<string, string>();
  const problem = (path: string, message: string) => {
    const line = entry.lineOf(path);
    problems.push(line === undefined ? { file: entry.file, path, message } : { file: entry.file, line, path, message });
  };
  for (const { def, hash, held } of listed) {
    if (!selected(spec, def.name)) continue;
    const local = localToolName(def.name);
    const name = importedToolName(spec, local);
    const other = owners.get(local);
    if (other !== undefined) {
      problem(entry.pointer, `tools '${other}' and '${def.name}' would both be imported as '${name}'; exclude one`);
      continue;
    }
    owners.set(local, def.name);
    const key = spec.overrides?.[def.name] !== undefined ? def.name : local;
    const override = spec.overrides?.[key];
    const at = `${entry.pointer}/overrides${toPointer([key])}`;
    const inOverride = (path: string) => override !== undefined && (path.split('/')[1] ?? '') in override;
    const compiled = compileTool(syntheticFile(spec, def, name, override), {
      file: entry.file,
      fileHash: sha256Hex(`${entry.hash}\u0000${hash}\u0000${held?.newHash ?? ''}`),
      defaults: ctx.defaults,
      fileResultGuards: spec.resultGuards,
      ajv: ctx.ajv,
      lineOf: (path) => (inOverride(path) ? entry.lineOf(at + path) : undefined),
    });
    if (Array.isArray(compiled)) {
      for (const p of compiled) problem(inOverride(p.path) ? at + p.path : entry.pointer, `imported tool '${def.name}': ${p.path || '/'}: ${p.message}`);
      continue;
    }
    tools.push({
      ...compiled,
      providerName: providerNameOf(name),
      // A held tool keeps serving its listing (unless it has no accepted definition: then it is not
      // listed at all, see listable()) but leaves the prefilter: a model should not pick what will be refused.
      visibility: held ? { ...compiled.visibility, prefilter: false } : compiled.visibility,
      mcp: { server: spec.name, tool: def.name, hash, ...(held ? { held } : {}) },
    });
  }
  return { tools, problems };
}

// ---- Clashes of servers without prefix (resources, templates, prompts): reported like tool name clashes.

/** The server file's `resources` / `prompts` include/exclude globs, on the server's own names. */
function passes(filter: { include?: string[] | undefined; exclude?: string[] | undefined } | undefined, own: string): boolean {
  const matches = (globs: readonly string[] | undefined) => (globs ?? []).some((g) => globToRegExp(g).test(own));
  return (filter?.include === undefined || matches(filter.include)) && !matches(filter?.exclude);
}

/**
 * Two servers with `prefix: ""` giving one resource URI, resource template or prompt name: a
 * problem on the later server's file (file order); the first keeps it and /mcp serves it from
 * there (src/mcp-server/resources.ts firstKeeps), so nothing is routed ambiguously.
 */
export function passthroughClashes(servers: readonly { entry: McpServerEntry; names: PassthroughNames | undefined }[]): FileProblem[] {
  const problems: FileProblem[] = [];
  const owners = new Map<string, McpServerEntry>();
  const kinds = [
    ['resources', 'resource', 'resources'],
    ['templates', 'resource template', 'resources'],
    ['prompts', 'prompt', 'prompts'],
  ] as const;
  for (const { entry, names } of servers) {
    if ((entry.spec.prefix ?? entry.spec.name) !== '' || !names) continue;
    for (const [kind, what, filter] of kinds) {
      for (const name of new Set(names[kind])) {
        if (!passes(entry.spec[filter], name)) continue;
        const key = `${kind}\u0000${name}`;
        const first = owners.get(key);
        if (!first) {
          owners.set(key, entry);
          continue;
        }
        const line = entry.lineOf(entry.pointer);
        const message = `${what} '${name}' clashes with the one MCP server '${first.spec.name}' (${first.file}) gives without prefix: served from there; set a prefix on one, or exclude it`;
        problems.push(line === undefined ? { file: entry.file, path: entry.pointer, message } : { file: entry.file, line, path: entry.pointer, message });
      }
    }
  }
  return problems;
}
