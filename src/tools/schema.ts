import { ResultGuardsSchema } from './result-guards-schema.js';
import { Type, type Static, type TLiteral, type TUnion } from '@sinclair/typebox';
import { CredentialsSchema } from './credentials-schema.js';

/** The schema of one tools.d tool file (SPEC §2). Published as openapi/tool.schema.json. */

export const TOOL_NAME_PATTERN = '^[a-z0-9_-]+(\\.[a-z0-9_-]+)*$';
const ToolName = Type.String({ pattern: TOOL_NAME_PATTERN, minLength: 1, maxLength: 128 });
const Obj = <T extends Parameters<typeof Type.Object>[0]>(props: T, description?: string) =>
  Type.Object(props, { additionalProperties: false, ...(description ? { description } : {}) });
const PositiveInt = (opts: { maximum?: number; description?: string } = {}) => Type.Integer({ minimum: 1, ...opts });
/** A union of string literals with its precise static type. */
export function Literals<const T extends string[]>(values: [...T], opts: { description?: string } = {}) {
  return Type.Union(values.map((v) => Type.Literal(v)), opts) as unknown as TUnion<TLiteral<T[number]>[]>;
}
const JsonSchemaObject = (description: string) => Type.Record(Type.String(), Type.Unknown(), { description });

export const SideEffect = Literals(['none', 'read', 'write', 'destructive', 'external'], {
  description: 'what calling the tool does to the world',
});

const HttpBackend = Obj({
  method: Type.Optional(Literals(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'])),
  url: Type.String({ minLength: 1, description: '{{name}} inserts an argument, URL-encoded; scheme and host cannot be templated' }),
  headers: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'templated; secrets only through ${env:NAME}' })),
  body: Type.Optional(
    Type.Union([Type.String(), Type.Object({}, { additionalProperties: true })], {
      description: '"{{arguments}}" sends the arguments as JSON; an object is a JSON template',
    }),
  ),
  maxResponseBytes: Type.Optional(PositiveInt()),
});

/** An active health check of a backend. */
export const BackendProbe = Type.Optional(
  Obj(
    {
      http: Type.Optional(
        Obj({
          path: Type.String({ pattern: '^/', description: "requested (GET) on the backend URL's scheme and host" }),
          expectStatus: Type.Optional(Type.Integer({ minimum: 100, maximum: 599, description: 'default: any 2xx' })),
        }),
      ),
      mcpPing: Type.Optional(Type.Literal(true, { description: "an MCP ping to the backend's server" })),
      intervalMs: Type.Integer({ minimum: 100 }),
      healthyAfter: Type.Optional(Type.Integer({ minimum: 1, description: 'consecutive successes that put an unhealthy backend back (default 2)' })),
      unhealthyAfter: Type.Optional(Type.Integer({ minimum: 1, description: 'consecutive failures that take it out of routing (default 3)' })),
    },
    'an active health check: one of http or mcpPing',
  ),
);

/** The routing fields of a backend (shared with a `kind: openapi` file's `backends:` entries). */
export const BackendRoutingFields = {
  id: Type.String({ pattern: '^[A-Za-z0-9_.-]+$', minLength: 1, maxLength: 64 }),
  weight: Type.Optional(Type.Number({ minimum: 0, description: 'share among healthy backends of the same priority' })),
  priority: Type.Optional(Type.Integer({ minimum: 0, description: 'lower first' })),
  cost: Type.Optional(Type.Number({ minimum: 0, description: 'relative cost of one call' })),
  match: Type.Optional(
    Obj(
      {
        callers: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'caller id globs' })),
        header: Type.Optional(Obj({ name: Type.String({ minLength: 1 }), value: Type.String() })),
      },
      'this backend serves only matching requests, and matching requests only such backends',
    ),
  ),
};

const Backend = Obj({
  ...BackendRoutingFields,
  http: Type.Optional(HttpBackend),
  credentials: Type.Optional(CredentialsSchema),
  mcp: Type.Optional(Obj({ server: Type.String({ minLength: 1 }), tool: Type.String({ minLength: 1 }) })),
  builtin: Type.Optional(Type.String({ minLength: 1, description: 'an in-process tool: echo, delay, fetch (GET of the url argument, on connections pinned to checked addresses)' })),
  probe: BackendProbe,
});

const ArgPath = Type.String({ minLength: 1, description: 'the argument checked: a name, a dotted path or a JSON pointer' });

const FunctionNames = (description: string) => Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description }));
const ReadOnlySql = Type.Union(
  [
    Type.Literal(true),
    Obj({
      dialect: Literals(['postgres', 'mysql', 'sqlite'], { description: "whose grammar judges the statement (postgres: the server's own parser)" }),
      allowFunctions: FunctionNames('functions allowed beside the default safe list (schema-qualified names are user functions)'),
      denyFunctions: FunctionNames('functions refused even if allowed'),
      allowRecursive: Type.Optional(Type.Boolean({ description: 'allow WITH RECURSIVE (default false: it can run without bound)' })),
    }),
  ],
  { description: 'the value must be one read-only SELECT statement; true means { dialect: postgres }' },
);

const Guard = Obj(
  {
    arg: ArgPath,
    pathPrefixes: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1, description: 'the path must stay under one of these' })),
    percentDecoded: Type.Optional(
      Type.Boolean({ description: "path guards: the upstream percent-decodes the value once; the decoded path is judged (default false: a '%' is refused)" }),
    ),
    backslashSeparator: Type.Optional(
      Type.Boolean({ description: 'path guards: the upstream takes a backslash for a separator (Windows); default false: a backslash is refused' }),
    ),
    relativeTo: Type.Optional(
      Type.String({ pattern: '^/', description: "path guards: the upstream's working directory, against which a relative path is judged (default /)" }),
    ),
    deny: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1, description: 'regular expressions (case-insensitive) the value must not match' })),
    readOnlySql: Type.Optional(ReadOnlySql),
    urlHosts: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'host globs a URL may name; [] with allowPrivate: false means any public host' })),
    allowPrivate: Type.Optional(Type.Boolean({ description: 'allow private, loopback and metadata addresses (default false)' })),
    resolve: Type.Optional(
      Type.Boolean({ description: "URL guards: resolve the host at call time and refuse it when any address is private or special (default false)" }),
    ),
  },
  'one check on one argument, after schema validation and before the gate',
);

const ConfirmRule = Obj(
  {
    when: Type.Array(
      Obj({
        arg: ArgPath,
        gt: Type.Optional(Type.Number()),
        gte: Type.Optional(Type.Number()),
        lt: Type.Optional(Type.Number()),
        lte: Type.Optional(Type.Number()),
        equals: Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Boolean()])),
        notUnder: Type.Optional(Type.String({ minLength: 1, description: 'a path outside this prefix' })),
        matches: Type.Optional(Type.String({ minLength: 1, description: 'a regular expression' })),
      }),
      { minItems: 1, description: 'confirmation is asked when any condition holds' },
    ),
  },
  'ask for confirmation only when a condition holds',
);

const Fallback = Type.Union([
  Obj({ tool: ToolName }),
  Obj({ result: Type.Unknown() }),
  Obj({ message: Type.String({ minLength: 1 }) }),
  Obj({ cache: Type.Literal(true, { description: 'answer from the last good result for the same arguments, however old (read-only idempotent tools only)' }) }),
]);

/**
 * What an MCP server may ask of the client whose call it is serving (SPEC §6, MCP): sampling,
 * elicitation, roots. In a server file for all its tools; in a tool file or an override for one
 * tool. Absent: allowed, with no token cap.
 */
export const ClientRequestsSchema = Obj(
  {
    sampling: Type.Optional(
      Obj({
        allow: Type.Optional(Type.Boolean({ default: true, description: 'false: sampling/createMessage is refused (the server gets an error), and audited' })),
        maxTokens: Type.Optional(PositiveInt({ description: 'a request asking for more maxTokens is capped to this' })),
      }),
    ),
    elicitation: Type.Optional(Obj({ allow: Type.Optional(Type.Boolean({ default: true })) })),
    roots: Type.Optional(Obj({ allow: Type.Optional(Type.Boolean({ default: true })) })),
  },
  'server-to-client requests made while serving a call (MCP tools only)',
);

export const ToolFileSchema = Obj(
  {
    $schema: Type.Optional(Type.String()),
    name: ToolName,
    title: Type.Optional(Type.String()),
    owner: Type.Optional(Type.String()),
    description: Type.String({ minLength: 1, description: 'when to use it, what it does, side effects; shown to models' }),
    aliases: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    examples: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'example user requests; they feed the prefilter' })),
    inputSchema: Type.Optional(JsonSchemaObject('JSON Schema (draft 2020-12) of the arguments; its type must be object')),
    outputSchema: Type.Optional(JsonSchemaObject('JSON Schema the upstream response must match')),
    sideEffect: SideEffect,
    idempotent: Type.Optional(Type.Boolean()),
    confirm: Type.Optional(Type.Union([Type.Boolean(), ConfirmRule])),
    guards: Type.Optional(Type.Array(Guard)),
    timeoutMs: Type.Optional(PositiveInt({ maximum: 3_600_000, description: 'whole call, all attempts included' })),
    retry: Type.Optional(
      Obj({
        attempts: PositiveInt({ maximum: 10, description: 'tries in all, the first included' }),
        backoffMs: Type.Optional(Type.Integer({ minimum: 0 })),
        tryTimeoutMs: Type.Optional(PositiveInt({ description: 'one try; a try that times out moves to the next attempt' })),
      }),
    ),
    breaker: Type.Optional(
      Obj({
        failureThreshold: Type.Optional(PositiveInt()),
        resetTimeoutMs: Type.Optional(PositiveInt()),
        errorThresholdPercentage: Type.Optional(Type.Number({ minimum: 1, maximum: 100 })),
        rollingCountTimeoutMs: Type.Optional(PositiveInt()),
        volumeThreshold: Type.Optional(Type.Integer({ minimum: 0 })),
      }),
    ),
    concurrency: Type.Optional(PositiveInt({ description: 'calls in flight at once; overflow answers UNAVAILABLE' })),
    rateLimit: Type.Optional(
      Obj({ requests: PositiveInt(), windowSeconds: PositiveInt() }, 'calls of this tool per window, all callers together (RATE_LIMITED beyond)'),
    ),
    visibility: Type.Optional(
      Obj({
        roles: Type.Optional(Type.Array(Literals(['agent', 'approver', 'admin']))),
        prefilter: Type.Optional(Type.Boolean()),
      }),
    ),
    redact: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'argument paths never written to audit or logs' })),
    resultGuards: Type.Optional(ResultGuardsSchema),
    clientRequests: Type.Optional(ClientRequestsSchema),
    result: Type.Optional(
      Obj({
        pick: Type.Optional(Type.Array(Type.String({ pattern: '^(/.*)?$' }), { description: 'JSON pointers kept from the response' })),
        maxBytes: Type.Optional(PositiveInt()),
        text: Type.Optional(Type.String({ description: 'template of the text shown to the model' })),
      }),
    ),
    deprecated: Type.Optional(
      Type.Union([Type.Boolean(), Obj({ replacement: Type.Optional(ToolName), message: Type.Optional(Type.String()) })]),
    ),
    async: Type.Optional(Type.Boolean()),
    cache: Type.Optional(Obj({ ttlSeconds: Type.Integer({ minimum: 0 }) })),
    fallback: Type.Optional(Fallback),
    backends: Type.Array(Backend, { minItems: 1 }),
  },
  'One toolgate tool (tools.d/*.yaml|*.yml|*.json)',
);

export type ToolFile = Static<typeof ToolFileSchema>;
export type ClientRequests = Static<typeof ClientRequestsSchema>;
export type BackendFile = Static<typeof Backend>;
export type HttpBackendFile = Static<typeof HttpBackend>;
export type SideEffectValue = Static<typeof SideEffect>;
export type FallbackFile = Static<typeof Fallback>;
export type GuardFile = Static<typeof Guard>;
export type ConfirmRuleFile = Static<typeof ConfirmRule>;
