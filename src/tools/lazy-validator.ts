import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';

type DataCxt = Parameters<ValidateFunction>[1];

/**
 * Keys whose mistakes only compiling finds: references to resolve, and regular expressions (the
 * meta-schema does not check them). A schema holding one compiles at load.
 */
const COMPILE_CHECKED = new Set(['$ref', '$dynamicRef', '$recursiveRef', '$id', '$anchor', '$dynamicAnchor', 'pattern', 'patternProperties']);

function needsCompileCheck(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(needsCompileCheck);
  return Object.entries(value).some(([k, v]) => COMPILE_CHECKED.has(k) || needsCompileCheck(v));
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
  if (needsCompileCheck(schema)) return compileNow(ajv, schema);
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
