import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';

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
    return m !== null && Object.hasOwn(defs, decodeURIComponent(m[1] as string).replace(/~1/g, '/').replace(/~0/g, '~'));
  }
  if (key === 'pattern') return typeof value !== 'string' || validRegex(value);
  if (key === 'patternProperties') return value !== null && typeof value === 'object' && Object.keys(value).every(validRegex);
  return false;
}

function needsCompileCheck(value: unknown, defs: Readonly<Record<string, unknown>>): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some((v) => needsCompileCheck(v, defs));
  return Object.entries(value).some(([k, v]) => (COMPILE_CHECKED.has(k) && !checkedHere(k, v, defs)) || needsCompileCheck(v, defs));
}

function compileNow(ajv: Ajv2020, schema: Record<string, unknown>): ValidateFunction {
  const fn = ajv.compile(schema);
  ajv.removeSchema(schema); // no cache growth across reloads; the function stays valid
  return fn;
}

/**
 * A validator for a tool's schema, checked at load and compiled once, on first use. Compiling
 * costs ~0.5 ms a schema (code generation), most of a cold load of thousands of tool files,
 * while a check against the draft 2020-12 meta-schema costs a few µs and finds most of what an
 * author gets wrong. Schemas with references or patterns compile at once, so an unresolvable
 * `$ref` or a bad regex is still a load-time file problem. Throws when the schema is invalid.
 */
export function compileValidator(ajv: Ajv2020, schema: Record<string, unknown>): ValidateFunction {
  if (!ajv.validateSchema(schema)) throw new Error(`schema is invalid: ${ajv.errorsText(ajv.errors)}`);
  const defs = schema['$defs'] !== null && typeof schema['$defs'] === 'object' ? (schema['$defs'] as Record<string, unknown>) : {};
  if (needsCompileCheck(schema, defs)) return compileNow(ajv, schema);
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
