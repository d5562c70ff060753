import { Type, type Static } from '@sinclair/typebox';
import { ToolOverrideSchema } from '../mcp-server-schema.js';
import { ResultGuardsSchema } from '../result-guards-schema.js';
import { BackendProbe, BackendRoutingFields } from '../schema.js';

/**
 * `kind: openapi` (SPEC §6): an OpenAPI document (3.0, 3.1, or Swagger 2.0 converted) whose
 * operations become tools named `<name>.<operationId in snake case>`; an HTTP backend per
 * operation (one per `backends:` entry) does the calling, so every policy of a tool file applies.
 */
const StringMap = Type.Record(Type.String(), Type.String(), { additionalProperties: false });
const Globs = (description: string) => Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description }));

const common = {
  $schema: Type.Optional(Type.String()),
  kind: Type.Literal('openapi'),
  name: Type.String({ pattern: '^[a-z0-9_-]+(\\.[a-z0-9_-]+)*$', maxLength: 64, description: 'prefix of the tool names: <name>.<operation>' }),
  baseUrl: Type.Optional(Type.String({ pattern: '^https?://', description: 'where the calls go; else the document\'s first server (its variables at their defaults, or serverVariables)' })),
  backends: Type.Optional(
    Type.Array(
      Type.Object(
        {
          ...BackendRoutingFields,
          baseUrl: Type.String({ pattern: '^https?://', description: 'where this backend\'s calls go' }),
          probe: BackendProbe,
        },
        { additionalProperties: false },
      ),
      {
        minItems: 1,
        description: 'instead of baseUrl: several origins of the same API; each operation gets one backend per entry (weight, priority, cost, match and probe as in a tool file)',
      },
    ),
  ),
  serverVariables: Type.Optional(Type.Record(Type.String(), Type.String(), { additionalProperties: false, description: 'values of the first server\'s {variables}' })),
  include: Globs('globs on operationId, tag or "METHOD /path": only these operations become tools'),
  exclude: Globs('globs on operationId, tag or "METHOD /path": these operations are left out'),
  overrides: Type.Optional(
    Type.Record(Type.String({ minLength: 1 }), ToolOverrideSchema, {
      additionalProperties: false,
      description: 'tool-file fields per operation, keyed by operationId or tool name (not inputSchema or backends)',
    }),
  ),
  auth: Type.Optional(Type.Record(Type.String(), Type.String(), { additionalProperties: false, description: 'securitySchemes by name → secret ("${env:KEY}"; basic: "user:pass"; oauth2: "clientId:clientSecret")' })),
  trustChanges: Type.Optional(Type.Boolean({ default: false, description: 'accept changed operations without an admin' })),
  acceptDefinitions: Type.Optional(
    Type.Record(Type.String({ minLength: 1 }), Type.String({ pattern: '^[0-9a-f]{64}$' }), {
      description:
        "tool name (or operationId) → the hash of an operation definition an admin reviewed: that exact definition is not held for the definition checks' findings (GET /admin/openapi and the accept answer give the hash). Acceptances through the admin route live in memory; this one outlives a restart.",
    }),
  ),
  timeoutMs: Type.Optional(Type.Integer({ minimum: 1, description: 'default timeout of the operations; config defaults.timeoutMs.http if absent' })),
  maxResponseBytes: Type.Optional(Type.Integer({ minimum: 1 })),
  resultGuards: Type.Optional(ResultGuardsSchema),
};

export const OpenApiFromFileSchema = Type.Object(
  { ...common, spec: Type.String({ minLength: 1, description: 'path of the document (YAML or JSON), relative to this file' }) },
  { additionalProperties: false },
);

export const OpenApiFromUrlSchema = Type.Object(
  {
    ...common,
    url: Type.String({ pattern: '^https?://', description: 'where the document is fetched (cached; refetched on reload or every refreshSeconds)' }),
    headers: Type.Optional(StringMap),
    refreshSeconds: Type.Optional(Type.Integer({ minimum: 10, description: 'refetch this often (a changed document reloads); else on every reload only' })),
    fetchTimeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 120000, description: 'bound of one fetch of the document, connect to last byte (default 10000)' })),
  },
  { additionalProperties: false },
);

export const OpenApiFileSchema = Type.Union([OpenApiFromFileSchema, OpenApiFromUrlSchema], {
  $id: 'OpenApiFile',
  description: 'An OpenAPI document whose operations become tools (tools.d/*.yaml|*.yml|*.json, kind: openapi)',
});
export type OpenApiFile = Static<typeof OpenApiFileSchema>;

/** A tools.d file that says `kind: openapi`. */
export function isOpenApiFile(value: object): boolean {
  return (value as { kind?: unknown }).kind === 'openapi';
}

/**
 * An OpenAPI document (not a tool file) by its first key, `openapi:` or `swagger:` (YAML or
 * JSON): one beside its tool file is skipped unparsed. A document whose version key comes later
 * is recognised once parsed.
 */
export function looksLikeDocument(text: string): boolean {
  return /^(?:\uFEFF)?(?:\s*#[^\n]*\n)*\s*(?:\{\s*)?(["']?)(?:openapi|swagger)\1\s*:/.test(text);
}

/** A parsed top-level file that is an OpenAPI document (read by the openapi file that names it), not a tool file. */
export function isDocumentValue(value: object): boolean {
  return !('kind' in value) && ('openapi' in value || 'swagger' in value);
}
