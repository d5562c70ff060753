import { Ajv2020, type ErrorObject, type Options, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FileProblem } from './source.js';

// ajv-formats ships CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** A draft 2020-12 validator factory with formats; one instance per purpose, compiled once. */
export function createAjv(opts: Options = {}): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false, ...opts });
  addFormats(ajv);
  return ajv;
}

/** An ajv instance made on its first use (createAjv's options): for validators compiled with compileOnUse. */
export function ajvOnUse(opts: Options = {}): () => Ajv2020 {
  let ajv: Ajv2020 | undefined;
  return () => (ajv ??= createAjv(opts));
}

/**
 * A validator compiled on its first use. For the schemas of file kinds a deployment may never have
 * (MCP server files, client-config references, OpenAPI files): each compiles to 200–500 KB of
 * generated code, which V8 keeps (source, bytecode) once compiled; together about 1.7 MB at idle.
 */
export function compileOnUse<T>(ajv: () => Ajv2020, schema: object): () => ValidateFunction<T> {
  let fn: ValidateFunction<T> | undefined;
  return () => (fn ??= ajv().compile<T>(schema));
}

/** One ajv error as a JSON-pointer path and a sentence. */
export function describeAjvError(e: ErrorObject): { path: string; message: string } {
  const params = e.params as Record<string, unknown>;
  if (e.keyword === 'additionalProperties') {
    const extra = String(params['additionalProperty']);
    return { path: `${e.instancePath}/${extra}`, message: `unknown key '${extra}'` };
  }
  if (e.keyword === 'required') {
    return { path: e.instancePath, message: `missing required property '${String(params['missingProperty'])}'` };
  }
  if (e.keyword === 'enum') {
    return { path: e.instancePath, message: `must be one of ${JSON.stringify(params['allowedValues'])}` };
  }
  return { path: e.instancePath, message: e.message ?? e.keyword };
}

/**
 * ajv reports every branch of a union; keep the most useful ones: drop the umbrella
 * "must match a schema in anyOf/oneOf" when more specific errors exist, and de-duplicate.
 */
export function ajvProblems(errors: readonly ErrorObject[] | null | undefined, file: string, lineOf?: (p: string) => number | undefined): FileProblem[] {
  const list = errors ?? [];
  const specific = list.filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf' && e.keyword !== 'if');
  const chosen = specific.length > 0 ? specific : list;
  const seen = new Set<string>();
  const out: FileProblem[] = [];
  for (const e of chosen) {
    const { path, message } = describeAjvError(e);
    const key = `${path}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const line = lineOf?.(path);
    out.push(line === undefined ? { file, path, message } : { file, line, path, message });
  }
  return out;
}
