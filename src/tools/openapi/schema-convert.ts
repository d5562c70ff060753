import { pointerSegments, toPointer } from '../../util/source.js';

/**
 * A dereferenced OpenAPI 3.1 schema (a graph: shared and circular objects) written out as a JSON
 * Schema tree for a tool's inputSchema or outputSchema. A schema that contains itself is kept as
 * `$defs` at the root of the tool's schema (`{ $ref: '#/$defs/Node' }`), named after the
 * component it came from: the model sees the real recursive shape and ajv validates it, no depth
 * is cut. A cycle that has no component name (it cannot happen with $refs the parser resolved) or
 * a schema past the size bounds is a SchemaProblem: the operation is skipped.
 */

export class SchemaProblem extends Error {
  /** `at`: JSON pointer below the schema being converted. */
  constructor(
    message: string,
    readonly at: string,
  ) {
    super(message);
  }
}

export type Direction = 'input' | 'output';
/** 3.0: schemas say `nullable`, `example` and boolean `exclusiveMinimum`/`exclusiveMaximum`, written out as 2020-12. */
export type Dialect = '3.0' | '3.1';

/** Nodes written per tool schema, and how deep: a document whose schemas inline past these is not a tool a model can read. */
const MAX_NODES = 20_000;
const MAX_DEPTH = 64;

/** OpenAPI-only keywords that mean nothing to a JSON Schema validator (and `$schema`/`$id`, which would move the base of `#/$defs`). */
const DROPPED = new Set(['discriminator', 'xml', 'externalDocs', 'nullable', '$schema', '$id']);
const SUBSCHEMA = new Set(['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties', 'additionalItems', 'contentSchema']);
const SUBSCHEMA_LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SUBSCHEMA_MAP = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

interface Written {
  readonly value: unknown;
  readonly nodes: number;
  readonly height: number;
}

/**
 * Subtrees already written, shared by the writers of one document: large documents reuse the same
 * component in hundreds of operations. Only a subtree that wrote no `$ref` is kept (it does not
 * depend on where it stands); the trees it hands out are shared, so they must not be mutated.
 */
/** Every subtree a SchemaCache handed out: the tools' schema checks do each once (lazy-validator.ts). */
export const SHARED_SCHEMAS: WeakSet<object> = new WeakSet();

export class SchemaCache {
  readonly input = new WeakMap<object, Written>();
  readonly output = new WeakMap<object, Written>();
}

/** One conversion: the `$defs` collected for one tool schema (input or output). */
export class SchemaWriter {
  readonly defs: Record<string, unknown> = {};
  private readonly names = new Map<string, string>();
  private readonly used = new Set<string>();
  private readonly refStack: string[] = [];
  private readonly onStack = new Set<object>();
  private readonly recursive = new Set<string>();
  private nodes = 0;
  private refsWritten = 0;
  private height = 0;
  private readonly written: WeakMap<object, Written>;

  constructor(
    private readonly refs: ReadonlyMap<object, string>,
    private readonly direction: Direction,
    cache: SchemaCache = new SchemaCache(),
    private readonly dialect: Dialect = '3.1',
  ) {
    this.written = direction === 'input' ? cache.input : cache.output;
  }

  /** The schema as a tree; throws SchemaProblem. */
  write(schema: unknown): unknown {
    return this.schema(schema, '', 0);
  }

  /** `{ ...schema, $defs }` when any recursive schema was kept. */
  withDefs(schema: Record<string, unknown>): Record<string, unknown> {
    return Object.keys(this.defs).length === 0 ? schema : { ...schema, $defs: this.defs };
  }

  private schema(node: unknown, at: string, depth: number): unknown {
    if (typeof node === 'boolean') return node;
    if (node === null || typeof node !== 'object' || Array.isArray(node)) throw new SchemaProblem('a schema must be an object or a boolean', at);
    const ref = this.refs.get(node);
    if (ref !== undefined && (this.refStack.includes(ref) || this.recursive.has(ref))) {
      this.recursive.add(ref);
      this.refsWritten++;
      this.height = Math.max(this.height, depth);
      return { $ref: `#/$defs/${this.defName(ref)}` };
    }
    const hit = this.written.get(node);
    if (hit !== undefined) {
      this.nodes += hit.nodes;
      this.height = Math.max(this.height, depth + hit.height);
      if (this.height > MAX_DEPTH) throw new SchemaProblem(`the schema nests deeper than ${MAX_DEPTH} levels`, at);
      if (this.nodes > MAX_NODES) throw new SchemaProblem(`the schema has more than ${MAX_NODES} parts once its $refs are resolved`, at);
      return hit.value;
    }
    if (this.onStack.has(node)) throw new SchemaProblem('a recursive schema without a component name cannot be written out', at);
    if (depth > MAX_DEPTH) throw new SchemaProblem(`the schema nests deeper than ${MAX_DEPTH} levels`, at);
    if (++this.nodes > MAX_NODES) throw new SchemaProblem(`the schema has more than ${MAX_NODES} parts once its $refs are resolved`, at);
    const start = { nodes: this.nodes - 1, refs: this.refsWritten, height: this.height };
    this.height = depth;
    this.onStack.add(node);
    if (ref !== undefined) this.refStack.push(ref);
    const out = this.object(node as Record<string, unknown>, at, depth);
    if (ref !== undefined) this.refStack.pop();
    this.onStack.delete(node);
    if (this.refsWritten === start.refs) {
      this.written.set(node, { value: out, nodes: this.nodes - start.nodes, height: this.height - depth });
      SHARED_SCHEMAS.add(out);
    }
    this.height = Math.max(this.height, start.height);
    if (ref !== undefined && this.recursive.has(ref)) {
      // This is the outermost occurrence of a schema that contains itself: it becomes the definition.
      const name = this.defName(ref);
      this.defs[name] ??= out;
      return { $ref: `#/$defs/${name}` };
    }
    return out;
  }

  private object(node: Record<string, unknown>, at: string, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const left: string[] = [];
    for (const [key, value] of Object.entries(node)) {
      const here = `${at}${toPointer([key])}`;
      if (key.startsWith('x-') || DROPPED.has(key)) continue;
      if (key === '$ref') {
        const target = String(value);
        throw new SchemaProblem(
          target.startsWith('#') ? `$ref '${target}' does not resolve inside the document` : `remote $ref '${target}' is not fetched (only references inside the document are followed)`,
          here,
        );
      }
      if (SUBSCHEMA.has(key)) out[key] = this.schema(value, here, depth + 1);
      else if (SUBSCHEMA_LIST.has(key) && Array.isArray(value)) out[key] = value.map((v, i) => this.schema(v, `${here}/${i}`, depth + 1));
      else if (SUBSCHEMA_MAP.has(key) && isRecord(value)) {
        const map: Record<string, unknown> = {};
        for (const [name, sub] of Object.entries(value)) {
          if (key === 'properties' && this.hidden(sub)) {
            left.push(name);
            continue;
          }
          map[name] = this.schema(sub, `${here}${toPointer([name])}`, depth + 1);
        }
        out[key] = map;
      } else if (key === 'example') {
        if (node['examples'] === undefined) out['examples'] = [data(value)];
      } else out[key] = data(value);
    }
    if (left.length > 0 && Array.isArray(out['required'])) out['required'] = (out['required'] as unknown[]).filter((r) => !left.includes(String(r)));
    if (this.dialect === '3.0') from30(node, out);
    return out;
  }

  /** readOnly properties are not sent, writeOnly ones not answered. */
  private hidden(prop: unknown): boolean {
    if (!isRecord(prop)) return false;
    return this.direction === 'input' ? prop['readOnly'] === true : prop['writeOnly'] === true;
  }

  /** `#/components/schemas/Pet` → `Pet`; another reference ending alike gets its whole pointer. */
  private defName(ref: string): string {
    const known = this.names.get(ref);
    if (known !== undefined) return known;
    // Names stay within [A-Za-z0-9._-], so `#/$defs/<name>` needs no escaping in a URI fragment.
    const segs = pointerSegments(ref.slice(ref.indexOf('#') + 1)).map((x) => x.replace(/[^A-Za-z0-9._-]/g, '_'));
    let name = segs[segs.length - 1] || 'schema';
    if (this.used.has(name)) name = segs.join('.') || 'schema';
    while (this.used.has(name)) name = `${name}_`;
    this.used.add(name);
    this.names.set(ref, name);
    return name;
  }
}

/** The 3.0 keywords of `node` as 2020-12 in `out`. */
function from30(node: Record<string, unknown>, out: Record<string, unknown>): void {
  if (node['nullable'] === true) {
    const type = out['type'];
    if (typeof type === 'string') out['type'] = [type, 'null'];
    else if (Array.isArray(type) && !type.includes('null')) out['type'] = [...type, 'null'];
    if (Array.isArray(out['enum']) && !out['enum'].includes(null)) out['enum'] = [...out['enum'], null];
  }
  for (const [flag, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    if (typeof node[flag] !== 'boolean') continue;
    if (node[flag] === true && typeof node[bound] === 'number') {
      out[flag] = node[bound];
      delete out[bound];
    } else delete out[flag];
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A data value (enum, const, default, examples) as plain JSON; a cycle (a $ref resolved inside example data) is cut. */
export function data(value: unknown, seen: Set<object> = new Set()): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return null;
  seen.add(value);
  const out = Array.isArray(value) ? value.map((v) => data(v, seen)) : Object.fromEntries(Object.entries(value).map(([k, v]) => [k, data(v, seen)]));
  seen.delete(value);
  return out;
}
