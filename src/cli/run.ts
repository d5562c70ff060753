import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, DEFAULT_CONFIG_FILE, loadConfig, type LoadedConfig } from '../config/load.js';
import { loadToolsDir, TOOL_FILE } from '../tools/loader.js';
import { clientConfigNotes } from './client-config.js';
import type { CompiledTool } from '../tools/types.js';
import type { Env } from '../util/env.js';
import { parseSource, toPointer, type FileProblem, type ParsedSource } from '../util/source.js';
import { connectOnce } from './connect.js';
import { connectIssuers, summarizeIssuers } from './oidc.js';
import { withLine } from './locate.js';
import { findInlineSecrets, isLiteralSecret } from './secrets.js';
import type { CheckReport, CheckWarning, ToolSummary } from './types.js';
import { openApiWarnings, openToAll, serverWarnings, toolWarnings, type KeyScope } from './warnings.js';

export interface CheckOptions {
  readonly config?: string | undefined;
  readonly toolsDir?: string | undefined;
  readonly env: Env;
  /** Start each MCP server once, bounded by this many ms (`--connect`); undefined: do not. */
  readonly connectTimeoutMs?: number | undefined;
}

/** A file as written (no `${env:}` expansion), or undefined when it does not parse (the loader reports why). */
function readRaw(file: string): ParsedSource | undefined {
  try {
    return parseSource(readFileSync(file, 'utf8'), file);
  } catch {
    return undefined;
  }
}

/** The values of a kind: openapi file's `auth` are secrets whatever the scheme is called. */
function openApiAuthSecrets(value: unknown): { path: string; what: string }[] {
  const v = value as { kind?: unknown; auth?: unknown } | null | undefined;
  if (v?.kind !== 'openapi' || v.auth === null || typeof v.auth !== 'object') return [];
  return Object.entries(v.auth as Record<string, unknown>)
    .filter(([, s]) => typeof s === 'string' && isLiteralSecret(s))
    .map(([name]) => ({ path: toPointer(['auth', name]), what: `auth '${name}'` }));
}

function secretWarnings(file: string, raw: ParsedSource | undefined): CheckWarning[] {
  const found = findInlineSecrets(raw?.value);
  const more = openApiAuthSecrets(raw?.value).filter((s) => !found.some((f) => f.path === s.path));
  return [...found, ...more].map((s) => {
    const message = `${s.what} holds a literal secret: write it as \${env:NAME}`;
    const line = raw?.lineOf(s.path);
    return line === undefined ? { file, path: s.path, message, rule: 'inline-secret' } : { file, line, path: s.path, message, rule: 'inline-secret' };
  });
}

/**
 * The keys that load (a key whose variable is unset is skipped), each with `tools` as the file
 * writes it: a key listing none sees every tool by default, which the warning says in those words.
 */
function loadedKeys(loaded: LoadedConfig, raw: ParsedSource | undefined): KeyScope[] {
  const v = raw?.value as { auth?: { keys?: unknown } } | null | undefined;
  const declared = Array.isArray(v?.auth?.keys) ? (v.auth.keys as unknown[]) : [];
  const written = new Map<string, unknown>();
  for (const k of declared) if (k !== null && typeof k === 'object' && 'id' in k) written.set(String(k.id), 'tools' in k ? k.tools : undefined);
  return loaded.config.auth.keys.map((k) => ({ id: k.id, tools: written.get(k.id) === undefined && written.has(k.id) ? undefined : k.tools }));
}

export function summarize(t: CompiledTool): ToolSummary {
  return {
    name: t.name,
    file: t.source.file,
    sideEffect: t.sideEffect,
    backends: t.backends.map((b) => ({ id: b.id, kind: b.target.kind })),
    gated: typeof t.confirm === 'boolean' ? t.confirm : `when ${t.confirm.describe}`,
    roles: t.visibility.roles === undefined ? null : [...t.visibility.roles],
    prefilter: t.visibility.prefilter,
    timeoutMs: t.timeoutMs,
  };
}

/** Validates the config and tools.d with the server's own loaders; never throws on a bad file. */
export async function runCheck(opts: CheckOptions): Promise<CheckReport> {
  const configFile = opts.config ?? opts.env['TOOLGATE_CONFIG'] ?? DEFAULT_CONFIG_FILE;
  const errors: FileProblem[] = [];
  const warnings: CheckWarning[] = [];
  let loaded: LoadedConfig | undefined;
  try {
    loaded = loadConfig({ file: opts.config, env: opts.env });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    errors.push(...e.problems);
  }
  const configRaw = existsSync(configFile) ? readRaw(configFile) : undefined;
  if (configRaw) warnings.push(...secretWarnings(configFile, configRaw));
  const config = loaded ? (loaded.file ?? null) : configFile;
  if (!loaded) return { ok: false, config, toolsDir: null, errors, warnings, tools: [], mcpServers: [], issuers: [], clientConfigs: [], openapi: [] };
  const configName = loaded.file ?? '(embedded defaults)';
  const keysLine = configRaw?.lineOf('/auth/keys');
  for (const message of loaded.warnings) {
    const at = keysLine === undefined ? { file: configName } : { file: configName, line: keysLine };
    warnings.push({ ...at, path: '/auth/keys', message, rule: 'config' });
  }

  const dir = opts.toolsDir ?? loaded.config.tools.dir;
  const secrets = new Set(loaded.secrets); // grows with every ${env:} value of tools.d
  const registry = await loadToolsDir({ dir, env: opts.env, secrets, defaults: loaded.config.defaults });
  const raws = new Map<string, ParsedSource | undefined>();
  let names: string[] = [];
  try {
    names = readdirSync(dir).filter((n) => TOOL_FILE.test(n)).sort();
  } catch {
    // the loader reported the unreadable directory
  }
  for (const name of names) {
    const file = join(dir, name);
    raws.set(file, readRaw(file));
    warnings.push(...secretWarnings(file, raws.get(file)));
  }
  const clients = clientConfigNotes(raws);
  warnings.push(...clients.warnings);
  const rawOf = (file: string) => (raws.has(file) ? raws.get(file) : readRaw(file));
  errors.push(...registry.problems.map((p) => withLine(p, rawOf(p.file))));
  const open = openToAll(loaded.config.auth.mode, loadedKeys(loaded, configRaw), loaded.config.auth.oidc);
  for (const t of registry.tools) if (!t.openapi) warnings.push(...toolWarnings(t, rawOf, open));
  for (const o of registry.openapi) warnings.push(...openApiWarnings(o.file, registry.tools.filter((t) => t.openapi && t.source.file === o.file), rawOf, open));
  for (const s of registry.servers) warnings.push(...serverWarnings(s));
  const connected = opts.connectTimeoutMs === undefined || registry.servers.length === 0
    ? undefined
    : await connectOnce(registry.servers, { timeoutMs: opts.connectTimeoutMs, secrets });
  if (connected) errors.push(...connected.errors.map((p) => withLine(p, rawOf(p.file))));
  const mcpServers = registry.servers.map((s) => {
    const connect = connected?.results.get(s.spec.name);
    return { name: s.spec.name, file: s.file, transport: s.spec.transport, include: s.spec.include ?? null, ...(connect ? { connect } : {}) };
  });
  const issuerConnect = opts.connectTimeoutMs === undefined || loaded.config.auth.oidc.length === 0
    ? undefined
    : await connectIssuers(loaded.config, configName, opts.connectTimeoutMs);
  if (issuerConnect) errors.push(...issuerConnect.errors.map((p) => withLine(p, configRaw)));
  const issuers = summarizeIssuers(loaded.config).map((s, n) => {
    const connect = issuerConnect?.results[n];
    return connect ? { ...s, connect } : s;
  });
  warnings.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : (a.line ?? 0) - (b.line ?? 0)));
  const openapi = registry.openapi.map(({ specPath: _path, ...o }) => o);
  return { ok: errors.length === 0, config, toolsDir: dir, errors, warnings, tools: registry.tools.map(summarize), mcpServers, issuers, clientConfigs: clients.names, openapi };
}
