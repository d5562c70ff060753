import type { OpenApiFile } from './file-schema.js';
import type { OpenApiDocument } from './document.js';
import type { BackendFile } from '../schema.js';

/**
 * Where an OpenAPI file's calls go: its `baseUrl`, else the document's first server with its
 * `{variables}` (the file's serverVariables, else their defaults). A relative server URL is
 * resolved against the document's `url:`; for a `spec:` file it needs a baseUrl.
 */
export type Base = { origin: string; basePath: string; href: string } | { problem: string; at: 'baseUrl' | 'servers' };

/** Routing fields of a `backends:` entry, as in a tool file's backend. */
export type BackendRouting = Pick<BackendFile, 'weight' | 'priority' | 'cost' | 'match' | 'probe'>;
/** One origin of the file's operations: the single one (baseUrl or the document's server, id = the file's name) or a `backends:` entry. */
export interface OperationBackend {
  readonly id: string;
  readonly origin: string;
  readonly basePath: string;
  readonly href: string;
  readonly routing: BackendRouting;
}

/**
 * Where the calls go, as backends: the `backends:` entries (each its own baseUrl), else the one
 * base of `baseOf`. A problem names its pointer in the tools.d file (`file`) or the document.
 */
export function backendsOf(spec: OpenApiFile, doc: OpenApiDocument): { backends: OperationBackend[] } | { problem: string; in: 'file' | 'document'; path: string } {
  if (spec.backends === undefined) {
    const base = baseOf(spec, doc);
    if ('problem' in base) return { problem: base.problem, in: base.at === 'baseUrl' ? 'file' : 'document', path: `/${base.at}` };
    return { backends: [{ id: spec.name, origin: base.origin, basePath: base.basePath, href: base.href, routing: {} }] };
  }
  if (spec.baseUrl !== undefined) return { problem: 'baseUrl and backends exclude each other: give each backend its baseUrl', in: 'file', path: '/baseUrl' };
  const seen = new Set<string>();
  const backends: OperationBackend[] = [];
  for (const [i, b] of spec.backends.entries()) {
    if (seen.has(b.id)) return { problem: `backend id '${b.id}' is used twice`, in: 'file', path: `/backends/${i}/id` };
    seen.add(b.id);
    const base = parseBase(b.baseUrl, 'baseUrl', `backends[${i}].baseUrl`);
    if ('problem' in base) return { problem: base.problem, in: 'file', path: `/backends/${i}/baseUrl` };
    const { id: _id, baseUrl: _url, ...routing } = b;
    backends.push({ id: b.id, origin: base.origin, basePath: base.basePath, href: base.href, routing });
  }
  return { backends };
}

export function baseOf(spec: OpenApiFile, doc: OpenApiDocument): Base {
  if (spec.baseUrl !== undefined) return parseBase(spec.baseUrl, 'baseUrl', 'baseUrl');
  const servers = Array.isArray(doc['servers']) ? (doc['servers'] as unknown[]) : [];
  const first = servers[0] as Record<string, unknown> | undefined;
  const given = typeof first?.['url'] === 'string' ? first['url'] : '/';
  // Problems quote the server as written, but never its userinfo (a password would reach logs, audit and `check`).
  const raw = given.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1…@');
  const variables = first?.['variables'] !== null && typeof first?.['variables'] === 'object' ? (first['variables'] as Record<string, Record<string, unknown>>) : {};
  let bad: string | undefined;
  const url = given.replace(/\{([^{}]+)\}/g, (_m, name: string) => {
    const v = variables[name];
    const value = spec.serverVariables?.[name] ?? (typeof v?.['default'] === 'string' ? v['default'] : undefined);
    if (value === undefined) bad ??= `server variable {${name}} has no value: set serverVariables.${name}`;
    else if (Array.isArray(v?.['enum']) && !(v['enum'] as unknown[]).includes(value)) bad ??= `server variable {${name}} = '${value}' is not one of ${JSON.stringify(v['enum'])}`;
    return value ?? '';
  });
  if (bad) return { problem: bad, at: 'servers' };
  if (!/^[a-z][a-z0-9+.-]*:/i.test(url)) {
    if (!('url' in spec)) return { problem: `the document's server '${raw}' is relative: set baseUrl`, at: 'servers' };
    let resolved: string;
    try {
      resolved = new URL(url, spec.url).href;
    } catch {
      return { problem: `the document's server '${raw}' is not a URL`, at: 'servers' };
    }
    return parseBase(resolved, 'servers', `the server '${raw}' (resolved against url)`);
  }
  return parseBase(url, 'servers', `the document's server '${raw}'`);
}

function parseBase(href: string, at: 'baseUrl' | 'servers', what: string): Base {
  let u: URL;
  try {
    u = new URL(href);
  } catch {
    return { problem: `${what} is not a URL`, at };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return { problem: `${what} must be http(s)`, at };
  if (u.username || u.password) return { problem: `${what} may not carry credentials: bind them in auth`, at };
  if (u.search || u.hash) return { problem: `${what} may not carry a query or fragment`, at };
  const basePath = u.pathname.replace(/\/+$/, '');
  return { origin: u.origin, basePath, href: `${u.origin}${basePath}` };
}
