import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { ajvOnUse, ajvProblems, compileOnUse } from '../util/ajv.js';
import { expandEnv, type Env } from '../util/env.js';
import { parseSource, SourceError, toPointer, type FileProblem, type ParsedSource } from '../util/source.js';
import { McpPoolSettingsSchema, ToolOverrideSchema, type McpServerFile } from './mcp-server-schema.js';
import { readClientConfig, type NameMapping } from './client-config.js';

/**
 * `kind: mcp-client-config`: gives a client's config file (left as the client writes it, in a
 * subfolder of tools.d or anywhere) the settings such files have no room for, per server.
 */

const MAX_BYTES = 1024 * 1024;

const ServerSettingsSchema = Type.Object(
  {
    prefix: Type.Optional(
      Type.String({
      pattern: '^([a-z0-9_-]+(\\.[a-z0-9_-]+)*)?$',
      maxLength: 64,
      description: 'what the imported tool names start with (default: the server name); "" imports them as the server names them (names must still be unique)',
    }),
  ),
    include: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    exclude: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    overrides: Type.Optional(Type.Record(Type.String({ minLength: 1 }), ToolOverrideSchema, { additionalProperties: false })),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
    prestart: Type.Optional(Type.Boolean()),
    pool: Type.Optional(McpPoolSettingsSchema),
    trustChanges: Type.Optional(Type.Boolean()),
    acceptDefinitions: Type.Optional(Type.Record(Type.String({ minLength: 1 }), Type.String({ pattern: '^sha256:[0-9a-f]{64}$' }))),
  },
  { additionalProperties: false },
);

export const McpClientConfigRefSchema = Type.Object(
  {
    kind: Type.Literal('mcp-client-config'),
    file: Type.String({ minLength: 1, description: 'the client config file, relative to this file (a subfolder of tools.d is not read as tool files)' }),
    servers: Type.Optional(
      Type.Record(Type.String({ minLength: 1 }), ServerSettingsSchema, { additionalProperties: false, description: 'per server, by its name as written or as served' }),
    ),
  },
  { additionalProperties: false, $id: 'McpClientConfigRef', title: 'settings for an MCP client config file' },
);
export type McpClientConfigRef = Static<typeof McpClientConfigRefSchema>;

const validator = compileOnUse<McpClientConfigRef>(ajvOnUse(), McpClientConfigRefSchema);

export interface RefServer {
  readonly spec: McpServerFile;
  readonly file: string;
  readonly pointer: string;
  readonly lineOf: (pointer: string) => number | undefined;
}

export interface RefResult {
  servers: RefServer[];
  problems: FileProblem[];
  warnings: FileProblem[];
  names: NameMapping[];
}

export function loadClientConfigRef(file: string, parsed: ParsedSource, env: Env, secrets: Set<string>): RefResult {
  const empty = (problems: FileProblem[]): RefResult => ({ servers: [], problems, warnings: [], names: [] });
  const at = (f: string, lineOf: (p: string) => number | undefined, path: string, message: string): FileProblem => {
    const line = lineOf(path);
    return line === undefined ? { file: f, path, message } : { file: f, line, path, message };
  };
  const value = parsed.value;
  const check = validator();
  if (!check(value)) return empty(ajvProblems(check.errors, file, parsed.lineOf));
  const target = isAbsolute(value.file) ? value.file : join(dirname(file), value.file);
  let source: ParsedSource;
  try {
    const size = statSync(target).size;
    if (size > MAX_BYTES) return empty([at(file, parsed.lineOf, '/file', `${value.file} is ${size} bytes; at most ${MAX_BYTES}`)]);
    source = parseSource(readFileSync(target, 'utf8'), target);
  } catch (e) {
    if (e instanceof SourceError) return empty(e.problems);
    return empty([at(file, parsed.lineOf, '/file', `cannot read ${value.file}: ${(e as Error).message}`)]);
  }
  const raw = source.value;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return empty([{ file: target, line: 1, path: '', message: 'an MCP client config file holds one object' }]);
  const read = readClientConfig(target, expandEnv(raw, env, secrets) as Record<string, unknown>);
  if (read.problems.length > 0) return empty(read.problems.map((p) => at(target, source.lineOf, p.path, p.message)));
  const settings = value.servers ?? {};
  const byName = new Map(read.names.flatMap((n) => [[n.from, n.to], [n.to, n.to]] as [string, string | null][]));
  const problems: FileProblem[] = [];
  for (const key of Object.keys(settings)) {
    if (!byName.has(key)) problems.push(at(file, parsed.lineOf, toPointer(['servers', key]), `no server '${key}' in ${value.file} (its servers: ${read.names.map((n) => n.from).join(', ') || 'none'})`));
  }
  if (problems.length > 0) return empty(problems);
  const servers = read.servers.map((s) => {
    const from = read.names.find((n) => n.to === s.spec.name)?.from ?? s.spec.name;
    const extra = settings[from] ?? settings[s.spec.name] ?? {};
    return { spec: { ...s.spec, ...extra } as McpServerFile, file: target, pointer: s.pointer, lineOf: source.lineOf };
  });
  return { servers, problems: [], warnings: read.warnings.map((w) => at(target, source.lineOf, w.path, w.message)), names: read.names };
}
