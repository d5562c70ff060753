import { Type } from '@sinclair/typebox';
import { ERROR_CATALOGUE } from '../errors.js';

/** Request and response schemas of the HTTP API: they drive validation and the OpenAPI document. */

const AnyObject = Type.Object({}, { additionalProperties: true });

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.Union(Object.keys(ERROR_CATALOGUE).map((c) => Type.Literal(c))),
      message: Type.String(),
      modelMessage: Type.String({ description: 'one or two sentences for the model: what failed, what it may do next' }),
      retryable: Type.Boolean(),
      details: Type.Array(AnyObject),
    }),
  },
  { $id: 'ErrorBody', description: 'Every error, whatever the route' },
);

export const errorResponses = (...statuses: number[]): Record<number, unknown> =>
  Object.fromEntries(statuses.map((s) => [s, Type.Ref('ErrorBody')]));

export const ToolResult = Type.Object(
  {
    content: Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true })),
    structuredContent: Type.Optional(AnyObject),
    isError: Type.Boolean(),
  },
  { $id: 'ToolResult' },
);

export const CallBody = Type.Object(
  {
    arguments: Type.Optional(Type.Object({}, { additionalProperties: true, description: "the tool's arguments" })),
    sessionId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  },
  { additionalProperties: false },
);

export const CallResponse = Type.Object({
  callId: Type.String(),
  tool: Type.String(),
  status: Type.Literal('ok'),
  backend: Type.String(),
  attempts: Type.Integer(),
  durationMs: Type.Number(),
  responseHash: Type.String(),
  fallback: Type.Union([Type.Null(), AnyObject]),
  policy: AnyObject,
  result: Type.Ref('ToolResult'),
  cached: Type.Optional(Type.Boolean({ description: 'true when answered from the result cache (no upstream call)' })),
  more: Type.Optional(
    Type.Object(
      { totalBytes: Type.Integer(), shownBytes: Type.Integer(), href: Type.String({ description: 'GET it for the next page of the full text' }) },
      { description: 'set when the result was over result.maxBytes: `result` holds its first part' },
    ),
  ),
  confirmationId: Type.Optional(Type.String({ description: 'set when the call ran after an approval' })),
  approver: Type.Optional(Type.String()),
});

export const PendingResponse = Type.Object({
  callId: Type.String(),
  tool: Type.String(),
  status: Type.Literal('pending_confirmation'),
  confirmation: Type.Object({ id: Type.String(), expiresAt: Type.String(), summary: Type.String() }),
});

export const AcceptedResponse = Type.Object({
  callId: Type.String(),
  tool: Type.String(),
  status: Type.Literal('running'),
});

export const ToolNameParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 256 }) });

export const ToolListQuery = Type.Object({
  format: Type.Optional(Type.Union(['toolgate', 'openai', 'anthropic', 'mcp'].map((f) => Type.Literal(f)))),
});

const NullableString = Type.Union([Type.String(), Type.Null()]);

/** GET /admin/mcp: every declared MCP server and, when it is not up, why (SPEC §6). */
const DefinitionFindingView = Type.Object({
  kind: Type.String({ description: 'injection | invisible' }),
  action: Type.Literal('hold'),
  count: Type.Integer({ minimum: 1 }),
  offsets: Type.Array(Type.Array(Type.Integer({ minimum: 0 }), { minItems: 2, maxItems: 2 }), { description: 'UTF-8 byte offsets [start, end) in the string at `path`' }),
  field: Type.String({ description: 'name | title | description | inputSchema | outputSchema | annotations' }),
  path: Type.String({ description: 'JSON Pointer into the definition' }),
  key: Type.Optional(Type.Boolean({ description: 'the finding is in a property name (the last segment of path), not in a value' })),
});

const HeldTool = Type.Object({
  tool: Type.String({ description: "the gateway's name of the tool" }),
  mcpTool: Type.String({ description: "the tool's name on its server" }),
  reason: Type.Union([Type.Literal('changed'), Type.Literal('poisoned')], { description: 'changed: another definition than the accepted one; poisoned: the definition checks found instructions or invisible characters in it' }),
  listed: Type.Boolean({ description: 'false: no definition was ever accepted, so the tool is listed nowhere; true: the accepted one stays listed, calls are refused' }),
  oldHash: NullableString,
  newHash: Type.String(),
  findings: Type.Array(DefinitionFindingView, { description: 'at most 64' }),
  findingsOmitted: Type.Integer({ minimum: 0, description: 'findings beyond the first 64, left out' }),
  definition: Type.Record(Type.String(), Type.Unknown(), { description: 'the held definition as the server listed it' }),
});

export const McpAdminView = Type.Object({
  servers: Type.Array(
    Type.Object({
      name: Type.String(),
      transport: Type.Union(['stdio', 'streamable-http', 'sse'].map((t) => Type.Literal(t))),
      state: Type.Union(['connecting', 'up', 'backoff', 'failed'].map((t) => Type.Literal(t))),
      protocolVersion: NullableString,
      tools: Type.Integer({ minimum: 0 }),
      restarts: Type.Integer({ minimum: 0 }),
      lastError: NullableString,
      nextRetryAt: NullableString,
      held: Type.Array(HeldTool, { description: 'Tools of this server held until an admin accepts them (POST /admin/tools/{tool}/accept)' }),
    }),
  ),
});

/** GET /admin/openapi: what each kind: openapi file became (operations, held ones, skipped ones and why). */
export const OpenApiAdminView = Type.Object({
  documents: Type.Array(
    Type.Object({
      file: Type.String(),
      name: Type.String(),
      source: Type.String(),
      version: Type.String(),
      operations: Type.Array(
        Type.Object({
          tool: Type.String(),
          method: Type.String(),
          path: Type.String(),
          sideEffect: Type.String(),
          held: Type.Optional(Type.Boolean({ description: 'calls answer TOOL_CHANGED until an admin accepts it (POST /admin/tools/{tool}/accept)' })),
          heldReason: Type.Optional(Type.Union([Type.Literal('changed'), Type.Literal('poisoned')], { description: 'changed: another definition than the accepted one; poisoned: the definition checks found instructions or invisible characters in it' })),
          listed: Type.Optional(Type.Boolean({ description: 'false: no definition was ever accepted, so the operation is listed nowhere' })),
          oldHash: Type.Optional(NullableString),
          newHash: Type.Optional(Type.String()),
          findings: Type.Optional(Type.Array(DefinitionFindingView, { description: 'at most 64' })),
          findingsOmitted: Type.Optional(Type.Integer({ minimum: 0 })),
          definition: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'the held definition (name, description, inputSchema, outputSchema) as the document gives it' })),
        }),
      ),
      skipped: Type.Array(
        Type.Object({ operation: Type.String(), tool: Type.Optional(Type.String()), file: Type.String(), line: Type.Optional(Type.Integer()), path: Type.String(), reason: Type.String() }),
      ),
    }),
  ),
});

export const ReloadResult = Type.Object({
  generation: Type.Integer(),
  at: Type.String(),
  tools: Type.Integer(),
  added: Type.Array(Type.String()),
  changed: Type.Array(Type.String()),
  removed: Type.Array(Type.String()),
  errors: Type.Array(
    Type.Object({ file: Type.String(), line: Type.Optional(Type.Integer()), path: Type.String(), message: Type.String() }),
  ),
});
