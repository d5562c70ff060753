import { createAjv, ajvProblems } from '../util/ajv.js';
import { expandEnv, type Env } from '../util/env.js';
import { canonicalJson, sha256Hex } from '../util/hash.js';
import type { FileProblem, ParsedSource } from '../util/source.js';
import {
  ClaudeDesktopFileSchema,
  McpHttpServerSchema,
  McpServerFileSchema,
  McpStdioServerSchema,
  fromClaudeDesktop,
  type ClaudeDesktopFile,
  type McpServerFile,
} from './mcp-server-schema.js';

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
}

const ajv = createAjv();
const checkStdio = ajv.compile<McpServerFile>(McpStdioServerSchema);
const checkHttp = ajv.compile<McpServerFile>(McpHttpServerSchema);
const checkAny = ajv.compile<McpServerFile>(McpServerFileSchema);
const checkClaude = ajv.compile<ClaudeDesktopFile>(ClaudeDesktopFileSchema);

/** A parsed file is an MCP server file when it says `kind` or holds `mcpServers`. */
export function isMcpServerFile(value: object): boolean {
  return 'kind' in value || 'mcpServers' in value;
}

/**
 * Validates an MCP server file (`kind: mcp-server`, or the Claude-Desktop `mcpServers` form)
 * after `${env:NAME}` expansion (each value substituted is recorded in `secrets`).
 */
export function loadMcpServerFile(file: string, parsed: ParsedSource, env: Env, secrets: Set<string>): McpFileResult {
  const value = expandEnv(parsed.value, env, secrets);
  const entry = (spec: McpServerFile, pointer: string): McpServerEntry => ({
    spec,
    file,
    pointer,
    hash: sha256Hex(canonicalJson(spec)),
    lineOf: parsed.lineOf,
  });
  if (isObject(value) && 'mcpServers' in value) {
    if (!checkClaude(value)) return { servers: [], problems: ajvProblems(checkClaude.errors, file, parsed.lineOf) };
    const servers = fromClaudeDesktop(value).map((spec) => entry(spec, `/mcpServers/${spec.name}`));
    return { servers, problems: [] };
  }
  if (isObject(value) && value['kind'] !== 'mcp-server') {
    const line = parsed.lineOf('/kind');
    const message = `unknown kind ${JSON.stringify(value['kind'])}: a file holds one tool (no kind) or kind: mcp-server`;
    return { servers: [], problems: [line === undefined ? { file, path: '/kind', message } : { file, line, path: '/kind', message }] };
  }
  // Check against the branch the transport names, so problems speak of that transport only.
  const transport = isObject(value) ? value['transport'] : undefined;
  const check = transport === 'stdio' ? checkStdio : transport === 'streamable-http' || transport === 'sse' ? checkHttp : checkAny;
  if (!check(value)) return { servers: [], problems: ajvProblems(check.errors, file, parsed.lineOf) };
  return { servers: [entry(value, '')], problems: [] };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
