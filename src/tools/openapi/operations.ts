import { globToRegExp } from '../../auth/caller.js';
import { localToolName } from '../../mcp/import.js';
import { sha256Hex } from '../../util/hash.js';
import { scanDefinition } from '../../guards/result/index.js';
import type { Finding } from '../../guards/result/types.js';
import { definitionFindings, type DefinitionFinding, type DefinitionScanner } from '../definition-findings.js';
import { toPointer, type FileProblem } from '../../util/source.js';
import type { ToolOverride } from '../mcp-server-schema.js';
import type { SideEffectValue, ToolFile } from '../schema.js';
import type { OpenApiDocument } from './document.js';
import type { OpenApiFile } from './file-schema.js';
import type { ParamPlan, RequestPlan } from './plan.js';
import { Skip, bodyPlan, outputSchema, paramPlan, paramSchema, unresolved, type Note } from './request-shape.js';
import { SchemaCache, SchemaProblem, SchemaWriter, type Dialect } from './schema-convert.js';
import { chooseSecurity, type SecurityContext } from './security.js';
import { baseOf } from './servers.js';

/** One operation of a document as a tool definition, before compiling. */
export interface OperationDef {
  /** The kind: openapi file's `name`. */
  readonly spec: string;
  /** `<spec.name>.<operationId in snake case>`, or `<spec.name>.<method>_<path words>`. */
  readonly name: string;
  readonly operationId: string | undefined;
  /** Upper case. */
  readonly method: string;
  readonly path: string;
  /** JSON pointer of the operation in the document, e.g. `/paths/~1pets/get`. */
  readonly pointer: string;
  readonly tags: readonly string[];
  /** The tool file the operation would be (overrides merged), compiled by compileOperation. */
  readonly file: ToolFile;
  /** The key of `overrides` that applied, if any (for problems' pointers into the spec file). */
  readonly overrideKey: string | undefined;
  readonly plan: RequestPlan;
  /** Digest of what the document says of the operation (name, description, schemas, side effect, request shape, origin, schemes): the pin. */
  readonly hash: string;
  /** The definition checks' findings (instructions to the model, invisible characters) in what a model is shown of it: any holds it. */
  readonly findings: readonly DefinitionFinding[];
}

export interface OperationDefs {
  ops: OperationDef[];
  /** Operations skipped and settings that cannot be used: each says why (document pointer and line, or a pointer into the spec file). */
  problems: FileProblem[];
  /** Notes that do not skip anything (an optional body left out, a scheme without a secret). */
  warnings: FileProblem[];
}

export interface OperationSource {
  /** The document's file (or URL): problems in the document are reported against it. */
  readonly file: string;
  /** The $ref sites of the dereferenced document (ReadDocument.refs): recursive schemas become $defs. */
  readonly refs?: ReadonlyMap<object, string>;
  /** The kind: openapi file and its lines, for problems in its own settings (default: `file`, no lines). */
  readonly specFile?: string;
  readonly specLineOf?: (pointer: string) => number | undefined;
}

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => v !== null && typeof v === 'object' && !Array.isArray(v);

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;
const SIDE_EFFECTS: readonly SideEffectValue[] = ['none', 'read', 'write', 'destructive', 'external'];
const MAX_DESCRIPTION = 4096;

/**
 * The operations of a dereferenced document as tool definitions. An operation that cannot be
 * called as the document says is skipped with a problem; the others are unaffected.
 */
export function operationDefs(spec: OpenApiFile, doc: OpenApiDocument, lineOf: (pointer: string) => number | undefined, source: OperationSource): OperationDefs {
  const problems: FileProblem[] = [];
  const warnings: FileProblem[] = [];
  const at = (path: string, message: string): FileProblem => {
    const line = lineOf(path);
    return line === undefined ? { file: source.file, path, message } : { file: source.file, line, path, message };
  };
  const specFile = source.specFile ?? source.file;
  const inSpec = (path: string, message: string): FileProblem => {
    const line = source.specLineOf?.(path);
    return line === undefined ? { file: specFile, path, message } : { file: specFile, line, path, message };
  };

  const base = baseOf(spec, doc);
  if ('problem' in base) return { ops: [], problems: [base.at === 'baseUrl' ? inSpec('/baseUrl', base.problem) : at('/servers', base.problem)], warnings };
  const components = isRec(doc['components']) ? doc['components'] : {};
  const schemes = isRec(components['securitySchemes']) ? components['securitySchemes'] : {};
  for (const name of Object.keys(spec.auth ?? {})) {
    if (!(name in schemes)) problems.push(inSpec(`/auth${toPointer([name])}`, `the document has no securityScheme '${name}' (it has: ${Object.keys(schemes).join(', ') || 'none'})`));
  }
  const security: SecurityContext = { file: source.file, secrets: spec.auth ?? {}, schemes, base: `${base.href}/` };

  const ops: OperationDef[] = [];
  const cache = new SchemaCache();
  // Operations share most of their strings (a dereferenced document repeats its schemas): each is scanned once.
  const scanned = new Map<string, readonly Finding[]>();
  const scan: DefinitionScanner = (text) => {
    let f = scanned.get(text);
    if (f === undefined) scanned.set(text, (f = scanDefinition(text)));
    return f;
  };
  const clean = new WeakSet<object>();
  const dialect: Dialect = typeof doc['openapi'] === 'string' && doc['openapi'].startsWith('3.0') ? '3.0' : '3.1';
  const unmetBy = new Map<string, { operations: string[]; pointer: string }>();
  const unmet = (note: string, operation: string, pointer: string) => {
    const seen = unmetBy.get(note);
    if (seen) seen.operations.push(operation);
    else unmetBy.set(note, { operations: [operation], pointer });
  };
  const byName = new Map<string, string>();
  const byId = new Map<string, string>();
  const usedOverrides = new Set<string>();
  const paths = isRec(doc['paths']) ? doc['paths'] : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isRec(item)) continue;
    // In the document's order: names and skips read like the document.
    for (const method of Object.keys(item).filter((k): k is (typeof METHODS)[number] => (METHODS as readonly string[]).includes(k))) {
      const op = item[method];
      if (!isRec(op)) continue;
      const pointer = `/paths${toPointer([path, method])}`;
      const operationId = typeof op['operationId'] === 'string' && op['operationId'] !== '' ? op['operationId'] : undefined;
      const tags = Array.isArray(op['tags']) ? (op['tags'] as unknown[]).filter((t): t is string => typeof t === 'string' && t !== '') : [];
      if (!selected(spec, operationId, tags, method, path)) continue;
      if (operationId !== undefined) {
        const first = byId.get(operationId);
        if (first !== undefined) {
          problems.push(at(`${pointer}/operationId`, `duplicate operationId '${operationId}' (first at ${first}): skipped`));
          continue;
        }
        byId.set(operationId, pointer);
      }
      const local = operationId !== undefined ? snakeName(operationId) : localToolName(`${method}_${pathWords(path)}`);
      const name = `${spec.name}.${local}`;
      const other = byName.get(name);
      if (other !== undefined) {
        problems.push(at(pointer, `would be named '${name}', like the operation at ${other}: skipped (exclude one, or give it an operationId)`));
        continue;
      }
      byName.set(name, pointer);
      const key = [operationId, local, name].find((k) => k !== undefined && spec.overrides?.[k] !== undefined);
      if (key !== undefined) usedOverrides.add(key);
      const built = buildOperation({ spec, doc, item, op, path, method, pointer, name, operationId, tags, source, security, base, cache, dialect, unmet, scan: { scan, clean }, override: key === undefined ? undefined : spec.overrides?.[key] });
      for (const w of built.warnings) warnings.push(at(w.at, w.message));
      if ('skip' in built) {
        problems.push(at(built.skip.at, `${method.toUpperCase()} ${path}: ${built.skip.message}: skipped`));
        continue;
      }
      ops.push({ ...built.def, overrideKey: key });
    }
  }
  for (const [note, { operations, pointer }] of unmetBy) {
    const which = operations.length === 1 ? operations[0] : `${operations.length} operations (${operations.slice(0, 3).join(', ')}${operations.length > 3 ? ', …' : ''})`;
    warnings.push(at(pointer, `${which}: ${note}`));
  }
  for (const key of Object.keys(spec.overrides ?? {})) {
    if (!usedOverrides.has(key)) warnings.push(inSpec(`/overrides${toPointer([key])}`, `no imported operation is '${key}' (by operationId or tool name)`));
  }
  return { ops, problems, warnings };
}

/** include/exclude: globs on the operationId, a tag, or "METHOD /path". */
function selected(spec: OpenApiFile, operationId: string | undefined, tags: readonly string[], method: string, path: string): boolean {
  const keys = [...(operationId !== undefined ? [operationId] : []), ...tags, `${method.toUpperCase()} ${path}`];
  const matches = (globs: readonly string[] | undefined) => (globs ?? []).some((g) => keys.some((k) => globToRegExp(g).test(k)));
  return (spec.include === undefined || matches(spec.include)) && !matches(spec.exclude);
}

/** An operationId in snake case (SPEC §6): `issues/list-for-repo` → `issues_list_for_repo`, `listPets` → `list_pets`. */
function snakeName(operationId: string): string {
  return localToolName(operationId.replace(/[^A-Za-z0-9]+/g, '_'));
}

/** `/pets/{petId}/toys` → `pets_pet_id_toys` (the method goes first). */
function pathWords(path: string): string {
  return (
    path
      .replace(/\{([^{}]*)\}/g, '$1')
      .split(/[^A-Za-z0-9]+/)
      .filter((w) => w !== '')
      .join('_') || 'root'
  );
}

interface BuildInput {
  readonly spec: OpenApiFile;
  readonly doc: OpenApiDocument;
  readonly item: Rec;
  readonly op: Rec;
  readonly path: string;
  readonly method: string;
  readonly pointer: string;
  readonly name: string;
  readonly operationId: string | undefined;
  readonly tags: readonly string[];
  readonly source: OperationSource;
  readonly security: SecurityContext;
  readonly base: { origin: string; basePath: string };
  readonly cache: SchemaCache;
  readonly dialect: Dialect;
  /** Records an operation whose security cannot be met (one warning per reason, not per operation). */
  readonly unmet: (note: string, operation: string, pointer: string) => void;
  readonly override: ToolOverride | undefined;
  readonly scan: { readonly scan: DefinitionScanner; readonly clean: WeakSet<object> };
}

type Built = { def: Omit<OperationDef, 'overrideKey'>; warnings: Note[] } | { skip: Note; warnings: Note[] };

function buildOperation(b: BuildInput): Built {
  const warnings: Note[] = [];
  try {
    return { def: operation(b, warnings), warnings };
  } catch (e) {
    if (e instanceof Skip) return { skip: { at: e.at, message: e.message }, warnings };
    // Whatever else a strange document makes go wrong costs this operation only, never the file.
    return { skip: { at: b.pointer, message: `could not be imported (${(e as Error).message})` }, warnings };
  }
}

function operation(b: BuildInput, warnings: Note[]): Omit<OperationDef, 'overrideKey'> {
  const { op, path, pointer } = b;
  const method = b.method.toUpperCase();
  if (!path.startsWith('/') || /[?#]/.test(path)) throw new Skip(pointer, 'the path must start with / and hold no query or fragment');
  const writer = new SchemaWriter(b.source.refs ?? new Map(), 'input', b.cache, b.dialect);
  const convert = (schema: unknown, at: string): unknown => {
    try {
      return writer.write(schema);
    } catch (e) {
      if (e instanceof SchemaProblem) throw new Skip(at + e.at, e.message);
      throw e;
    }
  };

  // Parameters: the path item's, then the operation's (which win by name and location).
  const declared = new Map<string, { p: Rec; at: string }>();
  const list = (v: unknown, at: string) => (Array.isArray(v) ? v.map((p, i) => ({ p, at: `${at}/${i}` })) : []);
  for (const { p, at } of [...list(b.item['parameters'], `/paths${toPointer([path])}/parameters`), ...list(op['parameters'], `${pointer}/parameters`)]) {
    if (!isRec(p)) throw new Skip(at, 'a parameter must be an object');
    if (typeof p['$ref'] === 'string') throw new Skip(at, unresolved(p['$ref']));
    declared.set(`${String(p['in'])}\0${String(p['name'])}`, { p, at });
  }
  const params: ParamPlan[] = [];
  const properties: Rec = {};
  const required: string[] = [];
  for (const { p, at } of declared.values()) {
    const plan = paramPlan(p, at, warnings);
    if (!plan) continue;
    if (plan.name in properties || plan.name === 'body') {
      throw new Skip(at, `two arguments would be named '${plan.name}' (arguments are the parameters by name, and the body under 'body')`);
    }
    properties[plan.name] = paramSchema(p, convert(p['schema'] ?? { type: 'string' }, `${at}/schema`));
    if (plan.required) required.push(plan.name);
    params.push(plan);
  }
  const choice = chooseSecurity(op['security'] ?? b.doc['security'], b.security);
  if (choice.note) b.unmet(choice.note, `${method} ${path}`, pointer);
  // A parameter that carries the credential itself (the API key's header or query name) is the scheme's, not the model's.
  const byScheme = new Set(choice.auth.flatMap((a) => (a.kind === 'apiKey' ? (a.in === 'cookie' ? [] : [`${a.in}\0${a.in === 'header' ? a.name.toLowerCase() : a.name}`]) : ['header\0authorization'])));
  const sent = params.filter((p) => {
    if (!byScheme.has(`${p.in}\0${p.in === 'header' ? p.name.toLowerCase() : p.name}`)) return true;
    warnings.push({ at: pointer, message: `${p.in} parameter '${p.name}' is set by the security scheme: not an argument` });
    delete properties[p.name];
    const i = required.indexOf(p.name);
    if (i >= 0) required.splice(i, 1);
    return false;
  });

  const template = [...path.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1] as string);
  for (const name of template) {
    if (!sent.some((p) => p.in === 'path' && p.name === name)) throw new Skip(pointer, `path parameter {${name}} is not declared`);
  }
  for (const p of sent.filter((p) => p.in === 'path' && !template.includes(p.name))) {
    warnings.push({ at: pointer, message: `path parameter '${p.name}' is not in the path ${path}: not sent` });
  }

  const body = bodyPlan(op['requestBody'], `${pointer}/requestBody`, warnings);
  if (body) {
    const schema = convert(body.schema, body.at);
    if (body.plan.mediaType === 'application/x-www-form-urlencoded' && !(isRec(schema) && (schema['type'] === 'object' || isRec(schema['properties'])))) {
      throw new Skip(body.at, 'a form body must be an object schema');
    }
    properties['body'] = body.description && isRec(schema) && schema['description'] === undefined ? { ...schema, description: body.description } : schema;
    if (body.plan.required) required.push('body');
  }
  const inputSchema = writer.withDefs({ type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false });
  const output = outputSchema(op['responses'], b.source.refs ?? new Map(), b.cache, b.dialect);

  const sideEffect = sideEffectOf(op, method, pointer);
  const description = describe(op, method, path);
  const plan: RequestPlan = {
    method,
    origin: b.base.origin,
    basePath: b.base.basePath,
    path,
    params: sent,
    ...(body ? { body: body.plan } : {}),
    ...(output.json ? { accept: 'application/json' } : {}),
    auth: choice.auth,
  };
  const base: ToolFile = {
    name: b.name,
    description,
    ...(b.tags.length > 0 ? { tags: [...b.tags] } : {}),
    inputSchema,
    ...(output.schema ? { outputSchema: output.schema } : {}),
    sideEffect: sideEffect.value,
    ...(sideEffect.idempotent !== undefined ? { idempotent: sideEffect.idempotent } : {}),
    ...(b.spec.timeoutMs !== undefined ? { timeoutMs: b.spec.timeoutMs } : {}),
    backends: [
      {
        id: b.spec.name,
        http: { method: method as 'GET', url: `${b.base.origin}${b.base.basePath}${path}`, ...(b.spec.maxResponseBytes !== undefined ? { maxResponseBytes: b.spec.maxResponseBytes } : {}) },
      },
    ],
  };
  const hash = sha256Hex(JSON.stringify([base, { ...plan, auth: plan.auth.map(publicAuth) }]));
  // An override that names a side effect takes that side effect's idempotent default, as for MCP tools.
  const idem = b.override?.sideEffect !== undefined && b.override.idempotent === undefined ? { idempotent: undefined } : {};
  const file: ToolFile = { ...base, ...idem, ...b.override, name: b.name, inputSchema, backends: base.backends };
  if (file.idempotent === undefined) delete file.idempotent;
  // Tool poisoning: the same checks as MCP tools' definitions, over what a model is shown (overrides applied).
  const findings = definitionFindings({ name: file.name, description: file.description, inputSchema: file.inputSchema, outputSchema: file.outputSchema }, b.scan.scan, b.scan.clean);
  return { spec: b.spec.name, name: b.name, operationId: b.operationId, method, path, pointer, tags: b.tags, file, plan, hash, findings };
}

/** What of a scheme is pinned: never the secret. */
function publicAuth(a: RequestPlan['auth'][number]): unknown {
  return a.kind === 'apiKey' ? [a.scheme, a.kind, a.in, a.name] : a.kind === 'oauth2' ? [a.scheme, a.kind, a.credentials.client.tokenUrl, a.credentials.client.scope ?? ''] : [a.scheme, a.kind];
}

function sideEffectOf(op: Rec, method: string, pointer: string): { value: SideEffectValue; idempotent: boolean | undefined } {
  const ext = op['x-toolgate-side-effect'];
  if (ext !== undefined) {
    if (!SIDE_EFFECTS.includes(ext as SideEffectValue)) throw new Skip(`${pointer}/x-toolgate-side-effect`, `x-toolgate-side-effect must be one of ${SIDE_EFFECTS.join(', ')}`);
    return { value: ext as SideEffectValue, idempotent: undefined };
  }
  switch (method) {
    case 'GET':
    case 'HEAD':
    case 'OPTIONS':
      return { value: 'read', idempotent: true };
    case 'PUT':
      return { value: 'write', idempotent: true };
    case 'DELETE':
      return { value: 'destructive', idempotent: undefined };
    default:
      return { value: 'write', idempotent: false };
  }
}

function describe(op: Rec, method: string, path: string): string {
  const parts = [op['summary'], op['description']].filter((s): s is string => typeof s === 'string' && s.trim() !== '').map((s) => s.trim());
  if (parts.length === 2 && parts[1]!.startsWith(parts[0]!)) parts.shift();
  let text = parts.join('\n\n') || `${method} ${path}`;
  if (text.length > MAX_DESCRIPTION) text = `${text.slice(0, MAX_DESCRIPTION - 1)}…`;
  return op['deprecated'] === true ? `[Deprecated operation] ${text}` : text;
}
