import { toPointer } from '../../util/source.js';
import type { BodyPlan, FormFieldPlan, ParamLocation, ParamPlan, ParamStyle } from './plan.js';
import { SchemaProblem, SchemaWriter, data, type Dialect, type SchemaCache } from './schema-convert.js';

/** The request shape of an operation: its parameters, its body and its output schema, as plans and JSON Schemas. */

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => v !== null && typeof v === 'object' && !Array.isArray(v);

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const WILDCARD_TYPE = /^(\*|application)\/\*\s*(?:;|$)/;
const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(?:;|$)/i;
/** Header parameters OpenAPI says are ignored (the request sets them), and those that would choose the host or frame the message. */
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);
const FORBIDDEN_HEADERS = new Set(['host', 'x-forwarded-host', 'forwarded', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'proxy-authorization', 'cookie', 'expect', 'x-request-id', 'traceparent', 'tracestate']);
const STYLES: Record<ParamLocation, readonly ParamStyle[]> = {
  path: ['simple', 'label', 'matrix'],
  query: ['form', 'spaceDelimited', 'pipeDelimited', 'deepObject'],
  header: ['simple'],
  cookie: ['form'],
};
const DEFAULT_STYLE: Record<ParamLocation, ParamStyle> = { path: 'simple', query: 'form', header: 'simple', cookie: 'form' };

export interface Note {
  at: string;
  message: string;
}

/** An operation that cannot be imported (the file keeps its other operations). */
export class Skip extends Error {
  constructor(
    readonly at: string,
    message: string,
  ) {
    super(message);
  }
}

export function unresolved(ref: string): string {
  return ref.startsWith('#') ? `$ref '${ref}' does not resolve inside the document` : `remote $ref '${ref}' is not fetched (only references inside the document are followed)`;
}

export function paramPlan(p: Rec, at: string, warnings: Note[]): ParamPlan | undefined {
  const name = p['name'];
  const where = p['in'];
  if (typeof name !== 'string' || name === '') throw new Skip(at, 'a parameter needs a name');
  if (where !== 'path' && where !== 'query' && where !== 'header' && where !== 'cookie') throw new Skip(at, `parameter '${name}' is in '${String(where)}': path, query, header or cookie expected`);
  const required = where === 'path' || p['required'] === true;
  if (where === 'cookie') {
    // Cookies are the client's session state, not an argument a model should set.
    if (required) throw new Skip(at, `cookie parameter '${name}' is required: cookie parameters are not sent`);
    warnings.push({ at, message: `optional cookie parameter '${name}' is left out: cookie parameters are not sent` });
    return undefined;
  }
  if (p['content'] !== undefined) throw new Skip(at, `parameter '${name}' is described by content, not schema (not supported)`);
  if (where === 'header') {
    const lower = name.toLowerCase();
    if (IGNORED_HEADERS.has(lower)) return undefined; // OpenAPI: such a parameter definition is ignored
    if (FORBIDDEN_HEADERS.has(lower) || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      if (required) throw new Skip(at, `header parameter '${name}' cannot be set by an argument`);
      warnings.push({ at, message: `header parameter '${name}' cannot be set by an argument: left out` });
      return undefined;
    }
  }
  const style = (p['style'] ?? DEFAULT_STYLE[where]) as ParamStyle;
  if (!STYLES[where].includes(style)) throw new Skip(`${at}/style`, `parameter '${name}': style '${String(style)}' is not supported in ${where} (supported: ${STYLES[where].join(', ')})`);
  const explode = typeof p['explode'] === 'boolean' ? p['explode'] : style === 'form';
  // deepObject without explode is undefined in OpenAPI; documents that leave explode out mean the usual a[b]=c.
  return { name, in: where, style, explode: style === 'deepObject' ? true : explode, allowReserved: where === 'query' && p['allowReserved'] === true, required };
}

/** A parameter's schema with its description, deprecation and examples. */
export function paramSchema(p: Rec, schema: unknown): unknown {
  if (!isRec(schema)) return schema;
  const out: Rec = { ...schema };
  if (typeof p['description'] === 'string' && out['description'] === undefined) out['description'] = p['description'];
  if (p['deprecated'] === true) out['deprecated'] = true;
  const examples = p['example'] !== undefined ? [p['example']] : isRec(p['examples']) ? Object.values(p['examples']).flatMap((e) => (isRec(e) && e['value'] !== undefined ? [e['value']] : [])) : [];
  if (examples.length > 0 && out['examples'] === undefined) out['examples'] = data(examples);
  return out;
}

export function bodyPlan(rb: unknown, at: string, warnings: Note[]): { plan: BodyPlan; schema: unknown; at: string; description: string | undefined } | undefined {
  if (rb === undefined) return undefined;
  if (!isRec(rb)) throw new Skip(at, 'requestBody must be an object');
  if (typeof rb['$ref'] === 'string') throw new Skip(at, unresolved(rb['$ref']));
  const content = isRec(rb['content']) ? rb['content'] : {};
  const required = rb['required'] === true;
  const types = Object.keys(content);
  // A wildcard accepts JSON (Kubernetes says */* for its JSON bodies): sent as application/json.
  const wildcard = types.find((t) => WILDCARD_TYPE.test(t));
  const chosen = types.find((t) => JSON_TYPE.test(t)) ?? types.find((t) => FORM_TYPE.test(t)) ?? wildcard;
  if (chosen === undefined) {
    const message = `request body type ${types.join(', ') || '(none)'} is not supported (application/json or application/x-www-form-urlencoded)`;
    if (required) throw new Skip(at, message);
    warnings.push({ at, message: `${message}: the optional body is left out` });
    return undefined;
  }
  const media = isRec(content[chosen]) ? content[chosen] : {};
  const here = `${at}/content${toPointer([chosen])}`;
  const form = FORM_TYPE.test(chosen);
  let fields: Record<string, FormFieldPlan> | undefined;
  if (form && isRec(media['encoding'])) {
    fields = {};
    for (const [field, enc] of Object.entries(media['encoding'])) {
      if (!isRec(enc)) continue;
      const ct = enc['contentType'];
      if (typeof ct === 'string' && !/^text\/plain\b/i.test(ct)) throw new Skip(`${here}/encoding${toPointer([field])}`, `form field '${field}' has contentType ${ct} (not supported)`);
      const style = (enc['style'] ?? 'form') as FormFieldPlan['style'];
      if (!['form', 'spaceDelimited', 'pipeDelimited', 'deepObject'].includes(style)) throw new Skip(`${here}/encoding${toPointer([field])}/style`, `form field '${field}': style '${String(style)}' is not supported`);
      fields[field] = { style, explode: typeof enc['explode'] === 'boolean' ? enc['explode'] : style === 'form' };
    }
  }
  const mediaType = form ? 'application/x-www-form-urlencoded' : 'application/json';
  return {
    plan: { mediaType, contentType: chosen === wildcard ? 'application/json' : chosen.split(';')[0]!.trim(), required, ...(fields && Object.keys(fields).length > 0 ? { fields } : {}) },
    schema: media['schema'] ?? {},
    at: `${here}/schema`,
    description: typeof rb['description'] === 'string' ? rb['description'] : undefined,
  };
}

/**
 * The outputSchema: when every 2xx response is JSON with an object schema (several: anyOf). A
 * 2xx without a JSON body (204, text) or a non-object schema leaves the tool without one, since
 * the gateway checks every answer against it. `json`: some 2xx answers JSON (Accept is sent).
 */
export function outputSchema(responses: unknown, refs: ReadonlyMap<object, string>, cache: SchemaCache, dialect: Dialect): { schema?: Record<string, unknown>; json: boolean } {
  if (!isRec(responses)) return { json: false };
  const ok = Object.entries(responses).filter(([code]) => /^2(\d\d|XX)$/i.test(code));
  const writer = new SchemaWriter(refs, 'output', cache, dialect);
  const schemas: unknown[] = [];
  const sources: unknown[] = [];
  let json = false;
  let usable = ok.length > 0;
  for (const [, r] of ok) {
    const content = isRec(r) && isRec(r['content']) ? r['content'] : {};
    const type = Object.keys(content).find((t) => JSON_TYPE.test(t));
    if (type === undefined) {
      usable = false;
      continue;
    }
    json = true;
    const media = content[type];
    const schema = isRec(media) ? media['schema'] : undefined;
    if (schema === undefined) {
      usable = false;
      continue;
    }
    // For speed: 200/201/202 naming one component (Kubernetes) are judged once. Writing and
    // comparing the copies as JSON text cost Kubernetes' import ~150 ms.
    const source = (isRec(schema) ? refs.get(schema) : undefined) ?? schema;
    if (sources.includes(source)) continue;
    sources.push(source);
    try {
      const written = writer.write(schema);
      // A recursive schema comes back as a $ref into $defs: judge (and type) it by its definition.
      const def = isRec(written) && typeof written['$ref'] === 'string' ? writer.defs[written['$ref'].slice('#/$defs/'.length)] : written;
      const s = def === written ? written : { type: 'object', ...(written as Rec) };
      if (!isRec(def) || !isRec(s) || !(def['type'] === 'object' || (def['type'] === undefined && isRec(def['properties'])))) usable = false;
      else if (!schemas.some((x) => JSON.stringify(x) === JSON.stringify(s))) schemas.push(s);
    } catch (e) {
      if (!(e instanceof SchemaProblem)) throw e;
      usable = false; // an output schema we cannot write costs the check, not the operation
    }
  }
  if (!usable || schemas.length === 0) return { json };
  const schema = schemas.length === 1 ? (schemas[0] as Record<string, unknown>) : { type: 'object', anyOf: schemas };
  return { schema: writer.withDefs(schema), json };
}
