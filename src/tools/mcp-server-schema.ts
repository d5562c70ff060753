import { Type, type Static } from '@sinclair/typebox';
import { ClientRequestsSchema, ToolFileSchema } from './schema.js';
import { CredentialsSchema } from './credentials-schema.js';
import { ResultGuardsSchema } from './result-guards-schema.js';

/**
 * Schemas of an MCP server file (SPEC §2, `kind: mcp-server`) and of the Claude-Desktop
 * `{ mcpServers: {...} }` form, with the conversion from the latter to the former.
 * Types come from the schemas via Static<>; defaults live in `default` annotations and in
 * MCP_SERVER_DEFAULTS (the pool applies them).
 */

/** One name segment: the server's tools are imported as `<name>.<tool>`. */
const SERVER_NAME_PATTERN = '^[a-z0-9_-]+$';

const StringMap = Type.Record(Type.String(), Type.String(), { additionalProperties: false });

export const McpPoolSettingsSchema = Type.Object(
  {
    maxInFlight: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000, default: 32, description: 'concurrent calls on the session' })),
    maxQueue: Type.Optional(Type.Integer({ minimum: 0, maximum: 100000, default: 64, description: 'calls waiting for a slot beyond maxInFlight; more fail at once with UNAVAILABLE' })),
    pingIntervalMs: Type.Optional(Type.Integer({ minimum: 0, default: 15000, description: '0 turns the ping off' })),
  },
  { additionalProperties: false },
);

/**
 * One override: any tool-file field but the ones the server owns (name, arguments, backends).
 * Derived from the tool-file schema, so a new tool-file field is overridable at once.
 */
export const ToolOverrideSchema = Type.Partial(Type.Omit(ToolFileSchema, ['$schema', 'name', 'inputSchema', 'backends']), {
  additionalProperties: false,
  description: 'tool-file fields for one imported tool (not name, inputSchema or backends)',
});
export type ToolOverride = Static<typeof ToolOverrideSchema>;

/** Which of a server's resources or prompts the gateway serves through /mcp (default: all). */
function PassThroughFilter(what: string) {
  return Type.Object(
    {
      include: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: `globs of ${what} to serve` })),
      exclude: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: `globs of ${what} to leave out` })),
    },
    { additionalProperties: false },
  );
}

/** Fields every MCP server file has, whatever its transport. */
const commonFields = {
  kind: Type.Literal('mcp-server'),
  name: Type.String({ pattern: SERVER_NAME_PATTERN, maxLength: 64, description: 'prefix of the imported tool names' }),
  prefix: Type.Optional(
    Type.String({
      pattern: '^([a-z0-9_-]+(\\.[a-z0-9_-]+)*)?$',
      maxLength: 64,
      description: 'what the imported tool names start with (default: the server name); "" imports them as the server names them (names must still be unique)',
    }),
  ),
  prestart: Type.Optional(Type.Boolean({ default: false, description: 'connect at boot (readiness waits), not at first call' })),
  pool: Type.Optional(McpPoolSettingsSchema),
  timeoutMs: Type.Optional(Type.Integer({ minimum: 1, description: 'default timeout of the imported tools; config defaults.timeoutMs.mcp if absent' })),
  include: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'globs of MCP tool names to import' })),
  exclude: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'globs of MCP tool names to leave out' })),
  overrides: Type.Optional(
    Type.Record(Type.String({ minLength: 1 }), ToolOverrideSchema, {
      additionalProperties: false,
      description: 'per-tool settings keyed by the MCP tool name; they win over the annotations',
    }),
  ),
  trustChanges: Type.Optional(Type.Boolean({ default: false, description: 'accept changed tool definitions without an admin' })),
  acceptDefinitions: Type.Optional(
    Type.Record(Type.String({ minLength: 1 }), Type.String({ pattern: '^sha256:[0-9a-f]{64}$' }), {
      description:
        "tool name on the server → the hash of a definition an admin reviewed: that exact definition is not held for the definition checks' findings (GET /admin/mcp and the accept answer give the hash). Acceptances through the admin route live in memory; this one outlives a restart.",
    }),
  ),
  resultGuards: Type.Optional(ResultGuardsSchema),
  resources: Type.Optional(PassThroughFilter('resources (globs on the server\'s own URIs and URI templates)')),
  prompts: Type.Optional(PassThroughFilter('prompts (globs on the server\'s own prompt names)')),
  clientRequests: Type.Optional(ClientRequestsSchema),
};

export const McpStdioServerSchema = Type.Object(
  {
    ...commonFields,
    transport: Type.Literal('stdio'),
    command: Type.String({ minLength: 1 }),
    args: Type.Optional(Type.Array(Type.String())),
    env: Type.Optional(StringMap),
    cwd: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);

export const McpHttpServerSchema = Type.Object(
  {
    ...commonFields,
    transport: Type.Union([Type.Literal('streamable-http'), Type.Literal('sse')]),
    url: Type.String({ pattern: '^https?://' }),
    headers: Type.Optional(StringMap),
    credentials: Type.Optional(CredentialsSchema),
  },
  { additionalProperties: false },
);

/** An MCP server file: a union discriminated by `transport`. */
export const McpServerFileSchema = Type.Union([McpStdioServerSchema, McpHttpServerSchema], {
  $id: 'McpServerFile',
  title: 'MCP server file',
});

export type McpStdioServer = Static<typeof McpStdioServerSchema>;
export type McpHttpServer = Static<typeof McpHttpServerSchema>;
export type McpServerFile = Static<typeof McpServerFileSchema>;
export type McpPoolSettings = Static<typeof McpPoolSettingsSchema>;
export type McpTransportKind = McpServerFile['transport'];

/** Values taken when a file leaves a field out. */
export const MCP_SERVER_DEFAULTS = {
  prestart: false,
  pool: { maxInFlight: 32, maxQueue: 64, pingIntervalMs: 15000 },
} as const satisfies { prestart: boolean; pool: Required<McpPoolSettings> };

// --- MCP client config files (Claude Desktop, Cursor, VS Code, Windsurf, Cline) ----------------

/**
 * One server as those clients write it: the keys toolgate reads are typed; any other key is allowed
 * (the loader ignores it with a warning), so an editor validating with this schema accepts the file
 * as the client wrote it. Names are free: the loader normalizes them (src/tools/client-config.ts).
 */
const ClientEntrySchema = Type.Object(
  {
    type: Type.Optional(Type.Union(['stdio', 'http', 'streamable-http', 'streamableHttp', 'sse'].map((t) => Type.Literal(t)))),
    command: Type.Optional(Type.String({ minLength: 1 })),
    args: Type.Optional(Type.Array(Type.String())),
    env: Type.Optional(StringMap),
    cwd: Type.Optional(Type.String({ minLength: 1 })),
    url: Type.Optional(Type.String({ pattern: '^https?://' })),
    serverUrl: Type.Optional(Type.String({ pattern: '^https?://', description: 'Windsurf\'s name for url' })),
    headers: Type.Optional(StringMap),
    disabled: Type.Optional(Type.Boolean({ description: 'true: the server is skipped' })),
    timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'milliseconds; seconds in a file named like cline_mcp_settings.json' })),
  },
  { additionalProperties: true },
);

const ClientServersSchema = Type.Record(Type.String({ minLength: 1 }), ClientEntrySchema, { maxProperties: 1000 });

/** `{ "mcpServers": {...} }` (Claude Desktop, Cursor, Windsurf, Cline) or `{ "servers": {...} }` (VS Code); other top-level keys are ignored with a warning. */
export const ClaudeDesktopFileSchema = Type.Object(
  { mcpServers: Type.Optional(ClientServersSchema), servers: Type.Optional(ClientServersSchema) },
  { additionalProperties: true, $id: 'ClaudeDesktopFile', title: 'MCP client config file (mcpServers or servers)' },
);
