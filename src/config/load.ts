import { existsSync, readFileSync } from 'node:fs';
import { ConfigSchema, type Config } from './schema.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { createAjv, ajvProblems } from '../util/ajv.js';
import { expandEnv, type Env } from '../util/env.js';
import { parseSource, SourceError, type FileProblem } from '../util/source.js';
import { consoleOidcProblems } from './console-oidc.js';
import { deepFreeze } from '../util/freeze.js';
import { configuredOrigin, ownOrigins } from '../plugins/origin.js';
import { SecretSet } from '../audit/secrets.js';
import { oidcProblems } from '../auth/oidc/config-problems.js';

export const DEFAULT_CONFIG_FILE = 'config/gateway.yaml';

export interface LoadedConfig {
  readonly config: Config;
  /**
   * Every non-empty value that came from `${env:...}`: redacted wherever it would be written.
   * One live set: tool files loaded later add theirs, and the logger sees them (a SecretSet
   * counts its changes, so the matchers of secret forms are rebuilt only when it grows).
   */
  readonly secrets: SecretSet;
  readonly file: string | undefined;
  readonly warnings: readonly string[];
}

export class ConfigError extends SourceError {}

/**
 * The config validator, held weakly: a gateway loads its config once, at start, and this validator
 * is ≈ 200 KB of generated code it need not keep for its life. Compiling takes 40–90 ms, so a
 * process that loads configs often (the CLI, the tests) reuses it while it is alive.
 */
let compiled: WeakRef<ValidateFunction<Config>> | undefined;
function configValidator(): ValidateFunction<Config> {
  let validate = compiled?.deref();
  if (!validate) {
    validate = createAjv({ useDefaults: true }).compile<Config>(ConfigSchema);
    compiled = new WeakRef(validate);
  }
  return validate;
}

/**
 * Loads, expands and validates the config file. `env` is the process environment (read only in
 * server.ts). A missing default file means the embedded defaults; a missing explicit file is an error.
 */
export function loadConfig(opts: { file?: string; env: Env }): LoadedConfig {
  const explicit = opts.file ?? opts.env['TOOLGATE_CONFIG'];
  const file = explicit ?? DEFAULT_CONFIG_FILE;
  let raw: unknown = {};
  let lineOf: (p: string) => number | undefined = () => undefined;
  let usedFile: string | undefined;
  if (existsSync(file)) {
    let parsed;
    try {
      parsed = parseSource(readFileSync(file, 'utf8'), file);
    } catch (e) {
      throw e instanceof SourceError ? new ConfigError(e.problems) : e;
    }
    raw = parsed.value ?? {};
    lineOf = parsed.lineOf;
    usedFile = file;
  } else if (explicit !== undefined) {
    throw new ConfigError([{ file, path: '', message: 'config file not found' }]);
  }
  const secrets = new SecretSet();
  const expanded = expandEnv(raw, opts.env, secrets);
  const withEnv = applyEnvOverrides(expanded, opts.env);
  const validate = configValidator();
  if (!validate(withEnv)) {
    throw new ConfigError(ajvProblems(validate.errors, usedFile ?? '(embedded defaults)', lineOf));
  }
  const config = withEnv;
  const warnings: string[] = [];
  const skipped: string[] = [];
  config.auth.keys = config.auth.keys.filter((k) => {
    if ((k.key ?? '') !== '' || k.sha256) return true;
    skipped.push(`'${k.id}'${keyVariable(raw, k.id)}`);
    return false;
  });
  if (config.state.redis === '') delete config.state.redis;
  const problems = semanticProblems(config, usedFile ?? '(embedded defaults)');
  if (problems.length > 0) throw new ConfigError(problems.map((p) => ({ ...p, ...lineAt(lineOf, p.path) })));
  const noKey = config.auth.mode === 'keys' && config.auth.keys.length === 0 && config.auth.oidc.length === 0;
  // With no key at all, one line says both why (the skipped keys) and what follows (loopback only).
  if (skipped.length > 0 && !noKey) warnings.push(`${skipped.length === 1 ? 'auth key' : 'auth keys'} ${skipped.join(', ')} ${skipped.length === 1 ? 'has' : 'have'} no key (the environment variable is unset): skipped`);
  if (noKey) {
    const why = skipped.length === 0 ? '' : ` (${skipped.length === 1 ? 'key' : 'keys'} ${skipped.join(', ')} skipped: variable unset)`;
    warnings.push(`no API key is configured${why}: serving on loopback only, every local caller acts with all roles`);
  }
  if (config.auth.mode === 'none' && config.auth.oidc.length > 0) warnings.push('auth.mode is none: auth.oidc is ignored, every caller is anonymous');
  if (config.auth.oidc.length > 0 && config.server.publicUrl === undefined && config.auth.mode === 'keys') {
    // Never derived from a request's Host header: a spoofed one would name the resource clients ask tokens for.
    warnings.push('auth.oidc without server.publicUrl: no OAuth metadata is published and 401s name no resource_metadata, so MCP clients cannot discover the issuer; set server.publicUrl to the URL clients reach the gateway at');
  }
  const consoleWarning = consoleOriginWarning(config);
  if (consoleWarning) warnings.push(consoleWarning);
  return { config: deepFreeze(config), secrets, file: usedFile, warnings };
}

function lineAt(lineOf: (p: string) => number | undefined, path: string): { line?: number } {
  const line = lineOf(path);
  return line === undefined ? {} : { line };
}

function applyEnvOverrides(value: unknown, env: Env): unknown {
  const cfg = (value !== null && typeof value === 'object' && !Array.isArray(value) ? { ...value } : {}) as Record<string, unknown>;
  const section = (name: string): Record<string, unknown> => {
    const cur = cfg[name];
    const copy = cur !== null && typeof cur === 'object' && !Array.isArray(cur) ? { ...(cur as object) } : {};
    cfg[name] = copy;
    return copy as Record<string, unknown>;
  };
  if (env['PORT']) section('server')['port'] = /^\d+$/.test(env['PORT']) ? Number(env['PORT']) : env['PORT'];
  if (env['HOST']) section('server')['host'] = env['HOST'];
  if (env['REDIS_URL']) section('state')['redis'] = env['REDIS_URL'];
  if (env['TOOLGATE_TOOLS_DIR']) section('tools')['dir'] = env['TOOLGATE_TOOLS_DIR'];
  if (env['TOOLGATE_OTLP_ENDPOINT']) Object.assign(section('tracing'), { enabled: true, endpoint: env['TOOLGATE_OTLP_ENDPOINT'] });
  return cfg;
}

/**
 * Bound to a non-loopback address, the gateway cannot know the names it is reached by: a browser
 * page of the console opened by such a name is another origin to the origin policy.
 */
function consoleOriginWarning(config: Config): string | undefined {
  const { host, port, allowedOrigins } = config.server;
  if (!config.console.enabled || isLoopback(host)) return undefined;
  const open = config.auth.mode === 'none';
  if (!open && allowedOrigins.length > 0) return undefined;
  const own = [...ownOrigins({ host, port })].sort();
  const where = own.length > 0 ? `only when opened at ${own.join(' or ')}` : 'only from a listed origin';
  return `server.host is ${host}: the approvals console can approve and reject ${where}` +
    (open ? ' (auth.mode none: listed origins are not enough; configure auth.keys)' : ', or from an origin listed in server.allowedOrigins');
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function semanticProblems(config: Config, file: string): FileProblem[] {
  const problems: FileProblem[] = [];
  const ids = new Set<string>();
  config.auth.keys.forEach((k, i) => {
    if (ids.has(k.id)) problems.push({ file, path: `/auth/keys/${i}/id`, message: `duplicate key id '${k.id}'` });
    ids.add(k.id);
  });
  for (const section of ['server', 'mcp'] as const) {
    config[section].allowedOrigins.forEach((o, i) => {
      if (configuredOrigin(o) === undefined) {
        problems.push({ file, path: `/${section}/allowedOrigins/${i}`, message: `'${o}' is not an origin: write scheme://host[:port] (http or https, no path)` });
      }
    });
  }
  problems.push(...consoleOidcProblems(config, file));
  for (const p of oidcProblems(config)) problems.push({ file, ...p });
  if (config.auth.mode === 'keys' && config.auth.keys.length === 0 && config.auth.oidc.length === 0 && !isLoopback(config.server.host)) {
    problems.push({
      file,
      path: '/server/host',
      message: `refusing to bind ${config.server.host} with no API key or issuer configured; configure auth.keys (or auth.oidc) or say auth: { mode: none } outright`,
    });
  }
  return problems;
}

/** ` (AGENT_KEY)` when the file writes the key's value as `${env:AGENT_KEY}`, else ''. */
function keyVariable(raw: unknown, id: string): string {
  const keys = (raw as { auth?: { keys?: unknown } } | null)?.auth?.keys;
  if (!Array.isArray(keys)) return '';
  const k: unknown = keys.find((x: unknown) => x !== null && typeof x === 'object' && (x as { id?: unknown }).id === id);
  const value = k !== null && typeof k === 'object' ? (k as { key?: unknown }).key : undefined;
  const m = typeof value === 'string' ? /^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(value) : null;
  return m ? ` (${m[1]})` : '';
}
