import { ajvOnUse, ajvProblems, compileOnUse } from '../util/ajv.js';
import { expandEnv, type Env } from '../util/env.js';
import { canonicalJson, sha256Hex } from '../util/hash.js';
import type { FileProblem, ParsedSource } from '../util/source.js';
import type { CredentialsFile } from './credentials-schema.js';
import { LITERAL_SECRET_MESSAGE, compileCredentials, literalClientSecrets } from '../auth/upstream/spec.js';
import { McpHttpServerSchema, McpServerFileSchema, McpStdioServerSchema, type McpServerFile } from './mcp-server-schema.js';
import { readClientConfig, SERVER_BLOCKS, type NameMapping } from './client-config.js';
import { loadClientConfigRef } from './client-config-ref.js';

/** One declared MCP server, as a registry generation holds it. */
export interface McpServerEntry {
  readonly spec: McpServerFile;
  /** The file that declares it. */
  readonly file: string;
  /** JSON pointer of the server inside its file ('' for a `kind: mcp-server` file). */
  readonly pointer: string;
  /** Hash of the expanded spec: an unchanged entry keeps its session and its imported tools. */
  readonly hash: string;
  readonly lineOf: (pointer: string) => number | undefined;
}

export interface McpFileResult {
  servers: McpServerEntry[];
  problems: FileProblem[];
  /** Keys of a client config file that were ignored, and similar notes `check` shows. */
  warnings?: FileProblem[];
  /** A client config file's server names as written and as served (`check` shows them). */
  names?: NameMapping[];
}

const ajv = ajvOnUse();
const checkStdio = compileOnUse<McpServerFile>(ajv, McpStdioServerSchema);
const checkHttp = compileOnUse<McpServerFile>(ajv, McpHttpServerSchema);
const checkAny = compileOnUse<McpServerFile>(ajv, McpServerFileSchema);

/** A parsed file is an MCP server file when it says `kind` or holds `mcpServers` (or VS Code's `servers`). */
export function isMcpServerFile(value: object): boolean {
  return 'kind' in value || isClientConfig(value);
}

function isClientConfig(value: object): boolean {
  return !('kind' in value) && SERVER_BLOCKS.some((b) => b in value);
}

/**
 * Validates an MCP server file (`kind: mcp-server`, or the Claude-Desktop `mcpServers` form)
 * after `${env:NAME}` expansion (each value substituted is recorded in `secrets`).
 */
export function loadMcpServerFile(file: string, parsed: ParsedSource, env: Env, secrets: Set<string>): McpFileResult {
  const problem = (path: string, message: string): FileProblem => {
    const line = parsed.lineOf(path);
    return line === undefined ? { file, path, message } : { file, line, path, message };
  };
  const raw = parsed.value;
  const literal = isObject(raw) ? literalClientSecrets(raw['credentials'], '/credentials') : [];
  if (literal.length > 0) return { servers: [], problems: literal.map((p) => problem(p, LITERAL_SECRET_MESSAGE)) };
  const value = expandEnv(parsed.value, env, secrets);
  const entry = (spec: McpServerFile, pointer: string): McpServerEntry => ({
    spec,
    file,
    pointer,
    hash: sha256Hex(canonicalJson(spec)),
    lineOf: parsed.lineOf,
  });
  if (isObject(value) && isClientConfig(value)) {
    const read = readClientConfig(file, value);
    if (read.problems.length > 0) return { servers: [], problems: read.problems.map((p) => problem(p.path, p.message)) };
    const servers = read.servers.map((s) => entry(s.spec, s.pointer));
    return { servers, problems: [], warnings: read.warnings.map((w) => problem(w.path, w.message)), names: read.names };
  }
  if (isObject(raw) && raw['kind'] === 'mcp-client-config') {
    const ref = loadClientConfigRef(file, parsed, env, secrets);
    const servers = ref.servers.map((s) => ({ spec: s.spec, file: s.file, pointer: s.pointer, hash: sha256Hex(canonicalJson(s.spec)), lineOf: s.lineOf }));
    return { servers, problems: ref.problems, warnings: ref.warnings, names: ref.names };
  }
  if (isObject(value) && value['kind'] !== 'mcp-server') {
    const line = parsed.lineOf('/kind');
    const message = `unknown kind ${JSON.stringify(value['kind'])}: a file holds one tool (no kind), kind: mcp-server, kind: mcp-client-config or kind: openapi`;
    return { servers: [], problems: [line === undefined ? { file, path: '/kind', message } : { file, line, path: '/kind', message }] };
  }
  // Check against the branch the transport names, so problems speak of that transport only.
  const transport = isObject(value) ? value['transport'] : undefined;
  const check = (transport === 'stdio' ? checkStdio : transport === 'streamable-http' || transport === 'sse' ? checkHttp : checkAny)();
  if (!check(value)) return { servers: [], problems: ajvProblems(check.errors, file, parsed.lineOf) };
  const bad = value.transport === 'stdio' ? [] : credentialProblems(value.credentials, problem);
  if (bad.length > 0) return { servers: [], problems: bad };
  return { servers: [entry(value, '')], problems: [] };
}

/**
 * Only client credentials suit a pooled session. The pool holds one session per server, shared
 * by every caller: one initialize, one tools/list, one Mcp-Session-Id (which servers bind to the
 * user who opened it), pings and a listen stream that belong to no caller. A per-caller token
 * (tokenExchange, passthrough) would either be refused on that session or mix users in it.
 */
function credentialProblems(credentials: CredentialsFile | undefined, problem: (path: string, message: string) => FileProblem): FileProblem[] {
  if (credentials === undefined) return [];
  if (!('clientCredentials' in credentials)) {
    const kind = 'passthrough' in credentials ? 'passthrough' : 'tokenExchange';
    return [problem(`/credentials/${kind}`, `${kind} is not available for MCP servers: the gateway keeps one session per server, shared by every caller, so a per-caller token cannot be sent on it; use clientCredentials, or put the upstream behind an HTTP tool file`)];
  }
  const out: FileProblem[] = [];
  compileCredentials(credentials, '/credentials', (path, message) => out.push(problem(path, message)));
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
