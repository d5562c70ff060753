import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { sha256Hex } from '../util/hash.js';

type DataCxt = Parameters<ValidateFunction>[1];

/**
 * Keys whose mistakes only compiling finds: references to resolve, and regular expressions (the
 * meta-schema does not check them). A schema holding one compiles at load, except for what is
 * checked here as compiling would: a `#/$defs/<name>` reference to a definition the schema has
 * (what OpenAPI imports write for recursive schemas) and a pattern that is a valid `u` regex.
 */
const COMPILE_CHECKED = new Set(['$ref', '$dynamicRef', '$recursiveRef', '$id', '$anchor', '$dynamicAnchor', 'pattern', 'patternProperties']);
const LOCAL_DEF = /^#\/\$defs\/([^/]+)$/;

function validRegex(source: string): boolean {
  try {
    new RegExp(source, 'u');
    return true;
  } catch {
    return false;
  }
}

function checkedHere(key: string, value: unknown, defs: Readonly<Record<string, unknown>>): boolean {
  if (key === '$ref') {
    const m = typeof value === 'string' ? LOCAL_DEF.exec(value) : null;
    if (m === null) return false;
    try {
      return Object.hasOwn(defs, decodeURIComponent(m[1] as string).replace(/~1/g, '/').replace(/~0/g, '~'));
    } catch {
      return false; // a malformed escape: compiling will say what is wrong
    }
  }
  if (key === 'pattern') return typeof value !== 'string' || validRegex(value);
  if (key === 'patternProperties') return value !== null && typeof value === 'object' && Object.keys(value).every(validRegex);
  return false;
}

/** Subschemas that appear in many tools' schemas (an OpenAPI document's components, written once); they hold no `$ref` string. */
export interface SharedSchemas {
  has(schema: object): boolean;
}

/** What is known of shared subschemas: checked against the meta-schema (valid alone is valid wherever a schema stands), and whether one needs compiling. */
const metaChecked = new WeakSet<object>();
const needsCompile = new WeakMap<object, boolean>();

/** Keywords whose value maps names (property names, definition names, regexes) to schemas: its keys are not keywords. */
const NAME_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

/**
 * `names`: `value` is such a map. For speed: a property *named* `$ref` or `$id` (Kubernetes'
 * JSONSchemaProps has both) used to be taken for the keyword, and 11 Kubernetes operations'
 * schemas (35 KB each) were compiled at load, ~290 ms.
 */
function needsCompileCheck(value: unknown, defs: Readonly<Record<string, unknown>>, shared?: SharedSchemas, names = false): boolean {
  if (value === null || typeof value !== 'object') return false;
  const cached = !names && shared?.has(value) === true;
  const known = cached ? needsCompile.get(value) : undefined;
  if (known !== undefined) return known;
  const needs = Array.isArray(value)
    ? value.some((v) => needsCompileCheck(v, defs, shared))
    : Object.entries(value).some(
        ([k, v]) =>
          (!names && COMPILE_CHECKED.has(k) && !checkedHere(k, v, defs)) ||
          needsCompileCheck(v, defs, shared, !names && NAME_MAPS.has(k) && v !== null && typeof v === 'object' && !Array.isArray(v)),
      );
  // A shared subschema holds no $ref string, so its answer does not depend on `defs`.
  if (cached) needsCompile.set(value, needs);
  return needs;
}

/**
 * The meta-schema check, each shared subschema checked once: a shared subschema already checked
 * is stood in for by `{}` (valid alone is valid wherever a schema stands), and the rest of the
 * schema, the shared subschemas not yet checked inline, is checked in one call, after which they
 * count as checked. For speed: one validateSchema call per tool rather than one per shared
 * subschema cut the GitHub document's import (1,223 tools, ~40,000 distinct subschemas) by ~150 ms.
 */
function checkSchema(ajv: Ajv2020, schema: Record<string, unknown>, shared: SharedSchemas | undefined): boolean {
  if (!shared) return ajv.validateSchema(schema) === true;
  const fresh = new Set<object>();
  const inside = (node: object): unknown =>
    Array.isArray(node) ? node.map(strip) : Object.fromEntries(Object.entries(node).map(([k, v]) => [k, strip(v)]));
  const strip = (node: unknown): unknown => {
    if (node === null || typeof node !== 'object') return node;
    if (!shared.has(node)) return inside(node);
    if (metaChecked.has(node) || fresh.has(node)) return {}; // checked before, or inline once in this skeleton
    fresh.add(node);
    return inside(node);
  };
  if (ajv.validateSchema(inside(schema) as Record<string, unknown>) !== true) return false;
  for (const node of fresh) metaChecked.add(node);
  return true;
}

/**
 * Compiled validators by the exact text of their schema, per ajv instance: tools whose schemas are
 * identical share one (≈ 5.6 KiB of generated code each). Safe: a compiled validator is pure, and
 * its `errors` are read right after each call. An entry goes when no tool holds its function.
 */
type ByText = Map<string, WeakRef<ValidateFunction>>;
const compiledBy = new WeakMap<Ajv2020, ByText>();
const forget = new FinalizationRegistry<{ byText: ByText; key: string }>(({ byText, key }) => {
  if (byText.get(key)?.deref() === undefined) byText.delete(key);
});

function compileNow(ajv: Ajv2020, schema: Record<string, unknown>): ValidateFunction {
  let byText = compiledBy.get(ajv);
  if (!byText) compiledBy.set(ajv, (byText = new Map()));
  const key = sha256Hex(JSON.stringify(schema));
  const known = byText.get(key)?.deref();
  if (known) return known;
  const fn = ajv.compile(schema);
  ajv.removeSchema(schema); // no cache growth across reloads; the function stays valid
  byText.set(key, new WeakRef(fn));
  forget.register(fn, { byText, key });
  return fn;
}

/**
 * A validator for a tool's schema, checked at load and compiled once, on first use. Compiling
 * costs ~0.5 ms a schema (code generation), most of a cold load of thousands of tool files,
 * while a check against the draft 2020-12 meta-schema costs a few µs and finds most of what an
 * author gets wrong. Schemas with references or patterns compile at once, so an unresolvable
 * `$ref` or a bad regex is still a load-time file problem. Throws when the schema is invalid.
 */
export function compileValidator(ajv: Ajv2020, schema: Record<string, unknown>, shared?: SharedSchemas): ValidateFunction {
  if (!checkSchema(ajv, schema, shared)) throw new Error(`schema is invalid: ${ajv.errorsText(ajv.errors)}`);
  const defs = schema['$defs'] !== null && typeof schema['$defs'] === 'object' ? (schema['$defs'] as Record<string, unknown>) : {};
  if (needsCompileCheck(schema, defs, shared)) return compileNow(ajv, schema);
  let compiled: ValidateFunction | undefined;
  const validate = function (this: unknown, data: unknown, cxt?: DataCxt): boolean {
    compiled ??= compileNow(ajv, schema);
    const ok = compiled.call(this, data, cxt);
    validate.errors = compiled.errors;
    return ok;
  } as ValidateFunction;
  validate.schema = schema;
  Object.defineProperty(validate, 'schemaEnv', { get: () => (compiled ??= compileNow(ajv, schema)).schemaEnv });
  return validate;
}
