import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import type { Config } from '../config/schema.js';
import { sha256Hex } from '../util/hash.js';
import { Template, parseJsonTemplate, parseTemplate, render } from '../util/template.js';
import { urlTemplateProblem } from '../util/url-template.js';
import type { FileProblem } from '../util/source.js';
import { BUILTIN_NAMES } from '../adapters/builtin/index.js';
import { compileMatch } from '../routing/match.js';
import { GuardConfigError, compileGuard, guardKindProblem } from '../guards/index.js';
import type { LookupAll } from '../guards/url.js';
import { compileConfirm } from '../confirm/rule.js';
import type { BackendFile, ToolFile } from './schema.js';
import { compileValidator, type SharedSchemas } from './lazy-validator.js';
import { compileProbe } from './probe.js';
import { compileCredentials } from '../auth/upstream/spec.js';
import type { BackendTarget, CompiledBackend, CompiledTool } from './types.js';
import type { ResultGuardFile } from './result-guards-schema.js';
import { resultGuardsOf } from '../guards/result/compile.js';

export interface CompileContext {
  readonly file: string;
  readonly fileHash: string;
  readonly defaults: Config['defaults'];
  /** Shared validator factory for tool schemas; compiled schemas are evicted from its cache at once. */
  readonly ajv: Ajv2020;
  readonly lineOf: (pointer: string) => number | undefined;
  /** The resolver of `resolve: true` URL guards (default: the system's). */
  readonly lookup?: LookupAll;
  /** The file-level `resultGuards` of an MCP server or OpenAPI file (between the config's defaults and the tool's own). */
  readonly fileResultGuards?: readonly ResultGuardFile[] | undefined;
  /** Subschemas shared by many tools' schemas (OpenAPI imports): each is checked once (lazy-validator.ts). */
  readonly sharedSchemas?: SharedSchemas | undefined;
}

const DEFAULT_MAX_RESULT_BYTES = 65536;
const DEFAULT_CONCURRENCY = 64;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers that choose the host a request is for (virtual hosts, proxies): fixed values only, like the URL's host. */
const HOST_HEADERS = new Set(['host', 'x-forwarded-host', 'forwarded']);

/** Turns one validated tool file into a CompiledTool, or the problems that stop it. */
export function compileTool(file: ToolFile, ctx: CompileContext): CompiledTool | FileProblem[] {
  const problems: FileProblem[] = [];
  const problem = (path: string, message: string) => {
    const line = ctx.lineOf(path);
    problems.push(line === undefined ? { file: ctx.file, path, message } : { file: ctx.file, line, path, message });
  };

  const inputSchema = file.inputSchema ?? { type: 'object' };
  if (inputSchema['type'] !== 'object') problem('/inputSchema/type', "the arguments' schema must have type: object");
  const validateArgs = compileSchema(ctx.ajv, inputSchema, '/inputSchema', problem, ctx.sharedSchemas);
  const validateOutput = file.outputSchema ? compileSchema(ctx.ajv, file.outputSchema, '/outputSchema', problem, ctx.sharedSchemas) : undefined;

  const readOnly = file.sideEffect === 'none' || file.sideEffect === 'read';
  const idempotent = file.idempotent ?? readOnly;
  const cacheTtl = file.cache?.ttlSeconds ?? 0;
  if (cacheTtl > 0 && !(readOnly && idempotent)) problem('/cache/ttlSeconds', 'only read-only idempotent tools may be cached');
  if (file.fallback && 'cache' in file.fallback && !(readOnly && idempotent)) problem('/fallback/cache', 'only read-only idempotent tools may fall back to a cached result');
  if (file.retry && file.retry.attempts > 1 && !idempotent) {
    problem('/retry/attempts', 'a tool that is not idempotent is never retried; set idempotent: true or attempts: 1');
  }

  const guards = (file.guards ?? []).flatMap((g, i) => {
    const kind = guardKindProblem(g);
    if (kind) return problem(`/guards/${i}`, kind), [];
    try {
      return [compileGuard(g, ctx.lookup ? { lookup: ctx.lookup } : {})];
    } catch (e) {
      return problem(`/guards/${i}${e instanceof GuardConfigError ? e.path : ''}`, (e as Error).message), [];
    }
  });
  if (typeof file.confirm === 'object') {
    file.confirm.when.forEach((c, i) => {
      if (c.matches === undefined) return;
      try {
        new RegExp(c.matches);
      } catch (e) {
        problem(`/confirm/when/${i}/matches`, (e as Error).message);
      }
    });
  }
  const ids = new Set<string>();
  const backends: CompiledBackend[] = [];
  file.backends.forEach((b, i) => {
    if (ids.has(b.id)) problem(`/backends/${i}/id`, `duplicate backend id '${b.id}'`);
    ids.add(b.id);
    const target = compileTarget(b, `/backends/${i}`, ctx, problem);
    if (target?.kind === 'builtin' && target.name === 'fetch' && !guards.some((g) => g.arg === 'url' && g.url)) {
      problem(`/backends/${i}/builtin`, "builtin fetch needs a URL guard on the argument 'url' (guards: [{ arg: url, urlHosts: [...] }])");
    }
    if (target) {
      backends.push({
        id: b.id,
        weight: b.weight ?? 1,
        priority: b.priority ?? 0,
        cost: b.cost ?? 0,
        match: b.match ? compileMatch(b.match) : undefined,
        target,
        hash: sha256Hex(JSON.stringify([b, file.breaker ?? null])),
        probe: b.probe ? compileProbe(b, target, `/backends/${i}/probe`, problem) : undefined,
      });
    }
  });
  const perUser = backends.some((b) => b.target.kind === 'http' && (b.target.credentials?.kind === 'tokenExchange' || b.target.credentials?.kind === 'passthrough'));
  if (perUser && cacheTtl > 0) problem('/cache/ttlSeconds', "a tool whose backend acts for the caller (tokenExchange, passthrough) cannot be cached: the cache is shared by every caller");
  if (perUser && file.fallback && 'cache' in file.fallback) problem('/fallback/cache', "a tool whose backend acts for the caller (tokenExchange, passthrough) cannot fall back to a cached result: it may be another caller's");
  if (problems.length > 0 || !validateArgs) return problems;

  const kindTimeout = Math.max(...backends.map((b) => ctx.defaults.timeoutMs[b.target.kind]));
  const failureThreshold = file.breaker?.failureThreshold ?? 5;
  return {
    name: file.name,
    providerName: '',
    title: file.title,
    owner: file.owner,
    description: file.description.trim(),
    aliases: file.aliases ?? [],
    tags: file.tags ?? [],
    examples: file.examples ?? [],
    inputSchema,
    outputSchema: file.outputSchema,
    sideEffect: file.sideEffect,
    idempotent,
    confirm: compileConfirm(file.confirm ?? (file.sideEffect === 'destructive' || file.sideEffect === 'external')),
    guards,
    resultGuards: resultGuardsOf(ctx.defaults.resultGuards, ctx.fileResultGuards, file.resultGuards),
    ...(file.clientRequests ? { clientRequests: file.clientRequests } : {}),
    timeoutMs: file.timeoutMs ?? kindTimeout,
    retry: {
      attempts: file.retry?.attempts ?? (idempotent ? Math.min(3, backends.length) : 1),
      backoffMs: file.retry?.backoffMs ?? 100,
      tryTimeoutMs: file.retry?.tryTimeoutMs,
    },
    breaker: {
      failureThreshold,
      resetTimeoutMs: file.breaker?.resetTimeoutMs ?? 30000,
      errorThresholdPercentage: file.breaker?.errorThresholdPercentage,
      rollingCountTimeoutMs: file.breaker?.rollingCountTimeoutMs ?? 10000,
      volumeThreshold: file.breaker?.volumeThreshold ?? failureThreshold,
    },
    concurrency: file.concurrency ?? DEFAULT_CONCURRENCY,
    ...(file.rateLimit ? { rateLimit: { requests: file.rateLimit.requests, windowSeconds: file.rateLimit.windowSeconds } } : {}),
    visibility: { roles: file.visibility?.roles, prefilter: file.visibility?.prefilter ?? true },
    redact: file.redact ?? [],
    result: {
      pick: file.result?.pick,
      maxBytes: file.result?.maxBytes ?? DEFAULT_MAX_RESULT_BYTES,
      text: file.result?.text === undefined ? undefined : parseTemplate(file.result.text),
    },
    deprecated:
      file.deprecated === undefined || file.deprecated === false
        ? undefined
        : file.deprecated === true
          ? { replacement: undefined, message: undefined }
          : { replacement: file.deprecated.replacement, message: file.deprecated.message },
    async: file.async ?? false,
    cacheTtlSeconds: cacheTtl,
    fallback: file.fallback,
    backends,
    validateArgs,
    validateOutput,
    source: { file: ctx.file, hash: ctx.fileHash },
  };
}

function compileSchema(
  ajv: Ajv2020,
  schema: Record<string, unknown>,
  path: string,
  problem: (path: string, message: string) => void,
  shared?: SharedSchemas,
): ValidateFunction | undefined {
  try {
    return compileValidator(ajv, schema, shared); // checked now, compiled on first use (cold loads stay fast)
  } catch (e) {
    problem(path, `not a valid JSON Schema: ${(e as Error).message}`);
    return undefined;
  }
}

function compileTarget(
  b: BackendFile,
  path: string,
  ctx: CompileContext,
  problem: (path: string, message: string) => void,
): BackendTarget | undefined {
  const kinds = (['http', 'mcp', 'builtin'] as const).filter((k) => b[k] !== undefined);
  if (kinds.length !== 1) {
    problem(path, 'a backend needs exactly one of http, mcp or builtin');
    return undefined;
  }
  if (b.credentials !== undefined && b.http === undefined) {
    problem(`${path}/credentials`, 'credentials apply to http backends (an MCP server file has its own credentials)');
    return undefined;
  }
  if (b.builtin !== undefined) {
    if (!BUILTIN_NAMES.includes(b.builtin)) {
      problem(`${path}/builtin`, `unknown builtin '${b.builtin}' (known: ${BUILTIN_NAMES.join(', ')})`);
      return undefined;
    }
    return { kind: 'builtin', name: b.builtin };
  }
  if (b.mcp !== undefined) return { kind: 'mcp', server: b.mcp.server, tool: b.mcp.tool };
  const h = b.http!;
  const url = parseTemplate(h.url);
  const head = typeof url.parts[0] === 'string' ? url.parts[0] : '';
  const fixedOrigin = url.names.length === 0 ? h.url : head;
  if (!/^https?:\/\/[^/?#{}\s]+(\/|$)/.test(fixedOrigin) || (url.names.length > 0 && !/^https?:\/\/[^/?#{}\s]+[/?#]/.test(head))) {
    problem(`${path}/http/url`, 'must be an absolute http(s) URL whose scheme and host are not templated');
    return undefined;
  }
  const dots = urlTemplateProblem(url);
  if (dots) problem(`${path}/http/url`, dots);
  const headers: [string, ReturnType<typeof parseTemplate>][] = [];
  for (const [name, value] of Object.entries(h.headers ?? {})) {
    const tpl = parseTemplate(value);
    if (!HEADER_NAME.test(name)) problem(`${path}/http/headers/${name}`, 'not a valid header name');
    else if (HOST_HEADERS.has(name.toLowerCase()) && tpl.names.length > 0) {
      problem(`${path}/http/headers/${name}`, `the ${name} header cannot be templated: like the URL's host, it chooses where the request goes`);
    }
    headers.push([name.toLowerCase(), tpl]);
  }
  const body = h.body === undefined ? undefined : parseJsonTemplate(h.body);
  const contentType = headers.find(([name]) => name === 'content-type')?.[1];
  if (body instanceof Template && body.names.length > 0 && !body.single && contentType && /json/i.test(render(contentType, {}))) {
    // Text placeholders are inserted unescaped: an argument `x","admin":true` would add keys.
    problem(`${path}/http/body`, 'a JSON body with placeholders must be written as an object or array (each value is then escaped), not as a string template');
  }
  const credentials = b.credentials === undefined ? undefined : compileCredentials(b.credentials, `${path}/credentials`, problem);
  if (credentials && headers.some(([name]) => name === 'authorization')) {
    problem(`${path}/http/headers/authorization`, 'credentials set the Authorization header: remove this one');
  }
  return {
    kind: 'http',
    method: h.method ?? 'GET',
    url,
    headers,
    body,
    maxResponseBytes: h.maxResponseBytes ?? ctx.defaults.http.maxResponseBytes,
    ...(credentials ? { credentials } : {}),
  };
}
