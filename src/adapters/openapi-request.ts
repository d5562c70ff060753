import { GatewayError } from '../errors.js';
import type { FormFieldPlan, ParamPlan, RequestPlan } from '../tools/openapi/plan.js';

/**
 * The HTTP request of one OpenAPI operation, from its plan and the call's (validated) arguments,
 * serialized as OpenAPI 3.1 §4.8.12.4 says. Scheme, host and port are the plan's alone; every path
 * argument is percent-encoded (a `/`, `?`, `#` or `%` in it stays data), a segment that would be
 * `.` or `..` is refused, and the final URL is parsed again (WHATWG) and must still be on the
 * plan's origin, under its base path, with the path exactly as built.
 */

export interface BuiltRequest {
  readonly origin: string;
  /** Path and query, as sent. */
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string | undefined;
}

/** What an HTTP field value cannot carry (RFC 9110 §5.5): a line break, NUL, another control, past U+00FF. */
const NOT_FIELD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const LINE_BREAK = /[\r\n]/;

/** Refuses a header value an argument made unsendable, as the model's mistake (not a network failure). */
export function checkHeaderValue(name: string, value: string): void {
  if (!NOT_FIELD_VALUE.test(value)) return;
  const what = LINE_BREAK.test(value) ? 'a line break' : 'a control character or one past U+00FF';
  throw new GatewayError('INVALID_ARGUMENTS', `an argument would put ${what} into header '${name}'`, {
    details: [{ path: '/', message: `header values cannot contain ${what}` }],
  });
}

function invalid(path: string, message: string): GatewayError {
  return new GatewayError('INVALID_ARGUMENTS', message, { details: [{ path, message }] });
}

/** RFC 3986 unreserved characters stay; everything else is percent-encoded (UTF-8). */
function encodeStrict(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** allowReserved: RFC 3986 reserved characters stay, except those that would end or split the query pair (& = # +) and %. */
function encodeReserved(s: string): string {
  return encodeStrict(s).replace(/%(3A|2F|3F|40|21|24|27|28|29|2A|2C|3B|5B|5D)/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** A primitive as text: objects and arrays below the first level are not expressible in these styles. */
function text(v: unknown, path: string): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === null) return '';
  throw invalid(path, 'a nested object or array cannot be sent in this parameter style');
}

function entriesOf(v: Record<string, unknown>, path: string): [string, string][] {
  return Object.entries(v).flatMap(([k, x]) => (x === undefined ? [] : [[k, text(x, `${path}/${k}`)] as [string, string]]));
}

/** One path parameter, encoded (simple, label, matrix). */
function pathValue(p: ParamPlan, v: unknown): string {
  const at = `/${p.name}`;
  const e = encodeStrict;
  if (Array.isArray(v)) {
    const items = v.map((x, i) => e(text(x, `${at}/${i}`)));
    if (p.style === 'label') return `.${items.join(p.explode ? '.' : ',')}`;
    if (p.style === 'matrix') return p.explode ? items.map((x) => `;${e(p.name)}=${x}`).join('') : `;${e(p.name)}=${items.join(',')}`;
    return items.join(',');
  }
  if (v !== null && typeof v === 'object') {
    const kv = entriesOf(v as Record<string, unknown>, at).map(([k, x]) => [e(k), e(x)] as const);
    const joined = p.explode ? kv.map(([k, x]) => `${k}=${x}`) : kv.flatMap(([k, x]) => [k, x]);
    if (p.style === 'label') return `.${joined.join(p.explode ? '.' : ',')}`;
    if (p.style === 'matrix') return p.explode ? joined.map((x) => `;${x}`).join('') : `;${e(p.name)}=${joined.join(',')}`;
    return joined.join(',');
  }
  const one = e(text(v, at));
  return p.style === 'label' ? `.${one}` : p.style === 'matrix' ? `;${e(p.name)}${one === '' ? '' : `=${one}`}` : one;
}

/** Query pairs (already encoded) of one parameter or form field. */
function queryPairs(name: string, style: FormFieldPlan['style'], explode: boolean, v: unknown, encode: (s: string) => string): string[] {
  const at = `/${name}`;
  const n = encode(name);
  if (style === 'deepObject') {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw invalid(at, `'${name}' must be an object (deepObject style)`);
    return entriesOf(v as Record<string, unknown>, at).map(([k, x]) => `${n}%5B${encode(k)}%5D=${encode(x)}`);
  }
  const sep = style === 'spaceDelimited' ? '%20' : style === 'pipeDelimited' ? '|' : ',';
  if (Array.isArray(v)) {
    const items = v.map((x, i) => encode(text(x, `${at}/${i}`)));
    return explode ? items.map((x) => `${n}=${x}`) : [`${n}=${items.join(sep)}`];
  }
  if (v !== null && typeof v === 'object') {
    const kv = entriesOf(v as Record<string, unknown>, at).map(([k, x]) => [encode(k), encode(x)] as const);
    return explode ? kv.map(([k, x]) => `${k}=${x}`) : [`${n}=${kv.flatMap(([k, x]) => [k, x]).join(sep)}`];
  }
  return [`${n}=${encode(text(v, at))}`];
}

/** A header parameter (simple style). */
function headerValue(p: ParamPlan, v: unknown): string {
  const at = `/${p.name}`;
  if (Array.isArray(v)) return v.map((x, i) => text(x, `${at}/${i}`)).join(',');
  if (v !== null && typeof v === 'object') {
    const kv = entriesOf(v as Record<string, unknown>, at);
    return (p.explode ? kv.map(([k, x]) => `${k}=${x}`) : kv.flat()).join(',');
  }
  return text(v, at);
}

/** The query names the operation sets itself: its declared query parameters and an apiKey sent in the query (lowercased: servers differ on case). */
function takenQueryNames(plan: RequestPlan): Set<string> {
  const names = new Set<string>();
  for (const p of plan.params) if (p.in === 'query') names.add(p.name.toLowerCase());
  for (const a of plan.auth) if (a.kind === 'apiKey' && a.in === 'query') names.add(a.name.toLowerCase());
  return names;
}

/**
 * A form-exploded object sends each property as its own query pair: a property named like another
 * parameter (past its schema's limits) or like the API key's parameter would set that one instead.
 */
function checkExplodedKeys(p: ParamPlan, v: unknown, taken: ReadonlySet<string>): void {
  if (p.style === 'deepObject' || !p.explode || v === null || typeof v !== 'object' || Array.isArray(v)) return;
  for (const k of Object.keys(v)) {
    if (taken.has(k.toLowerCase())) throw invalid(`/${p.name}/${k}`, `property '${k}' of '${p.name}' would be sent as the query parameter '${k}', which the operation sets itself`);
  }
}

/** Builds the request; the auth plans' static credentials are added (an oauth2 token is the adapter's). */
export function buildRequest(plan: RequestPlan, args: Readonly<Record<string, unknown>>): BuiltRequest {
  const byName = new Map(plan.params.map((p) => [p.name, p]));
  // The template's own text is encoded as a URL would be (a space, non-ASCII), so that parsing it back changes nothing.
  let path = plan.path.split(/(\{[^{}]*\})/).map((part) => (part.startsWith('{') && part.endsWith('}') ? part : encodeURI(part))).join('').replace(/\{([^{}]*)\}/g, (_m, name: string) => {
    const p = byName.get(name);
    const v = args[name];
    if (!p || v === undefined) throw invalid(`/${name}`, `path parameter '${name}' is required`);
    const value = pathValue(p, v);
    if (value === '') throw invalid(`/${name}`, `path parameter '${name}' cannot be empty`);
    return value;
  });
  for (const segment of path.split('/')) {
    // An encoded dot is still a dot to WHATWG URL and to most servers: '.' and '..' would move the path.
    const decoded = segment.replace(/%2e/gi, '.');
    if (decoded === '.' || decoded === '..') throw invalid('/', `a path parameter cannot make the segment '${segment}' (it would change the path)`);
  }
  path = `${plan.basePath}${path}`;

  const query: string[] = [];
  const headers: Record<string, string> = {};
  const taken = takenQueryNames(plan);
  for (const p of plan.params) {
    const v = args[p.name];
    if (v === undefined || p.in === 'path') continue;
    if (p.in === 'query') checkExplodedKeys(p, v, taken);
    if (p.in === 'query') query.push(...queryPairs(p.name, p.style as FormFieldPlan['style'], p.explode, v, p.allowReserved ? encodeReserved : encodeStrict));
    else if (p.in === 'header') {
      const value = headerValue(p, v);
      checkHeaderValue(p.name, value);
      headers[p.name.toLowerCase()] = value;
    }
  }
  const cookies: string[] = [];
  for (const a of plan.auth) {
    if (a.kind === 'apiKey') {
      if (a.in === 'header') headers[a.name.toLowerCase()] = a.value;
      else if (a.in === 'query') query.push(`${encodeStrict(a.name)}=${encodeStrict(a.value)}`);
      else cookies.push(`${a.name}=${a.value}`);
    } else if (a.kind === 'bearer') headers['authorization'] = `Bearer ${a.token}`;
    else if (a.kind === 'basic') headers['authorization'] = `Basic ${Buffer.from(a.userPass, 'utf8').toString('base64')}`;
  }
  if (cookies.length > 0) headers['cookie'] = cookies.join('; ');
  if (plan.accept) headers['accept'] = plan.accept;

  let body: string | undefined;
  if (plan.body && args['body'] !== undefined) {
    headers['content-type'] = plan.body.contentType;
    if (plan.body.mediaType === 'application/json') body = JSON.stringify(args['body']);
    else {
      const value = args['body'];
      if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid('/body', 'a form body must be an object');
      body = Object.entries(value)
        .filter(([, v]) => v !== undefined)
        .flatMap(([k, v]) => {
          const enc = plan.body?.fields?.[k];
          return queryPairs(k, enc?.style ?? 'form', enc?.explode ?? true, v, encodeStrict);
        })
        .join('&');
    }
  }

  const full = query.length > 0 ? `${path}?${query.join('&')}` : path;
  checkUrl(plan, path, full);
  return { origin: plan.origin, path: full, headers, body };
}

/** The URL as a server will read it: same origin, under the base path, the path unchanged by normalization. */
function checkUrl(plan: RequestPlan, path: string, full: string): void {
  let u: URL;
  try {
    u = new URL(full, plan.origin);
  } catch {
    throw invalid('/', 'the arguments do not make a valid URL');
  }
  const under = plan.basePath === '' || u.pathname === plan.basePath || u.pathname.startsWith(`${plan.basePath}/`);
  if (u.origin !== plan.origin || !under || u.pathname !== path) throw invalid('/', 'the arguments would move the request off its path');
}
