import { Type, type Static } from '@sinclair/typebox';
import { ResultGuardSchema } from '../tools/result-guards-schema.js';

/** The gateway config file (SPEC §1). Defaults live here and nowhere else. */

const Role = Type.Union([Type.Literal('agent'), Type.Literal('approver'), Type.Literal('admin')]);

const ApiKey = Type.Object(
  {
    id: Type.String({ minLength: 1, pattern: '^[A-Za-z0-9_.:-]+$', description: 'caller id written to audit records' }),
    key: Type.Optional(Type.String({ description: 'the key itself, usually "${env:NAME}"; empty means not configured' })),
    sha256: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: 'hex sha256 of the key' })),
    roles: Type.Array(Role, { default: ['agent'] }),
    tools: Type.Array(Type.String({ minLength: 1 }), { default: ['*'], description: 'glob patterns of tool names this key may see' }),
    resources: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'globs of the resource URIs (as /mcp lists them) this key may see; absent: derived from tools (README, MCP)' })),
    prompts: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'globs of the prompt names (as /mcp lists them) this key may see; absent: derived from tools (README, MCP)' })),
    toolSearch: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean()),
          k: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
          alwaysList: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
        },
        { additionalProperties: false, description: "this key's own mcp.toolSearch on /mcp: each field given replaces mcp.toolSearch's" },
      ),
    ),
  },
  { additionalProperties: false },
);

/** One trusted issuer of access tokens (SPEC §6, Identity). */
const OidcIssuer = Type.Object(
  {
    issuer: Type.String({ pattern: '^https?://', description: 'the iss claim; discovery at <issuer>/.well-known/openid-configuration' }),
    audience: Type.Optional(
      Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })], { description: 'accepted aud values; default server.publicUrl' }),
    ),
    jwksUri: Type.Optional(Type.String({ pattern: '^https?://', description: 'else from discovery' })),
    algorithms: Type.Array(Type.String({ pattern: '^(RS|PS|ES)(256|384|512)$|^EdDSA$|^Ed25519$' }), { minItems: 1, default: ['RS256', 'ES256'] }),
    clockSkewSeconds: Type.Integer({ minimum: 0, maximum: 600, default: 30 }),
    jwksRefreshCooldownSeconds: Type.Number({
      minimum: 0,
      maximum: 3600,
      default: 30,
      description: 'at most one JWKS (and discovery) fetch per this interval, however many unknown kids arrive',
    }),
    fetchTimeoutMs: Type.Integer({ minimum: 1, maximum: 60000, default: 5000, description: 'bound on each discovery, JWKS and introspection request' }),
    claims: Type.Object(
      {
        id: Type.String({ minLength: 1, default: 'sub', description: 'claim (dotted path) that becomes the caller id' }),
        roles: Type.String({ minLength: 1, default: 'roles', description: 'claim (dotted path): array or space-separated string of roles' }),
        tools: Type.String({ minLength: 1, default: 'tools', description: 'claim (dotted path): array or space-separated string of tool-name globs' }),
      },
      { additionalProperties: false, default: {} },
    ),
    scopePrefixes: Type.Optional(
      Type.Object(
        {
          roles: Type.Optional(Type.String({ minLength: 1, description: 'e.g. "role:": scope role:approver gives the approver role' })),
          tools: Type.Optional(Type.String({ minLength: 1, description: 'e.g. "tools:": scope tools:weather.* gives the glob weather.*' })),
        },
        { additionalProperties: false },
      ),
    ),
    requiredScopes: Type.Array(Type.String({ minLength: 1, pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$' }), {
      default: [],
      description: 'scopes a token of this issuer must carry to use the gateway at all (else 403 insufficient_scope); advertised as scopes_supported',
    }),
    defaultRoles: Type.Array(Role, { default: ['agent'], description: 'when the token carries no roles' }),
    defaultTools: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'when the token carries no tools: sees nothing' }),
    introspection: Type.Optional(
      Type.Object(
        {
          endpoint: Type.Optional(Type.String({ pattern: '^https?://', description: 'RFC 7662; else introspection_endpoint from discovery' })),
          clientId: Type.String({ minLength: 1 }),
          clientSecret: Type.String({ minLength: 1, description: 'usually "${env:NAME}"' }),
        },
        { additionalProperties: false, description: 'opaque (non-JWT) tokens are checked here' },
      ),
    ),
  },
  { additionalProperties: false },
);

/** The console's "Sign in with <issuer>": a public client (authorization code + PKCE in the browser, no secret). */
const ConsoleOidc = Type.Object(
  {
    issuer: Type.String({ pattern: '^https?://', description: 'one of auth.oidc[].issuer; the page fetches its discovery document and token endpoint from the browser (CORS)' }),
    clientId: Type.String({ minLength: 1, maxLength: 256, description: 'a public client registered with the redirect URI <gateway origin>/console' }),
    scopes: Type.Array(Type.String({ pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$' }), { default: ['openid'], description: 'scopes the page asks for' }),
    resource: Type.Optional(
      Type.Union([Type.String({ pattern: '^https?://' }), Type.Literal(false)], {
        description: 'RFC 8707 resource sent with the requests; default the issuer entry\'s first audience, else server.publicUrl; false sends none (Entra ID v2)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ConfigSchema = Type.Object(
  {
    server: Type.Object(
      {
        host: Type.String({ default: '127.0.0.1' }),
        port: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
        bodyLimitBytes: Type.Integer({ minimum: 1024, default: 1048576 }),
        drainTimeoutMs: Type.Integer({ minimum: 0, default: 10000 }),
        allowedOrigins: Type.Array(Type.String(), {
          default: [],
          description: 'browser origins (scheme://host[:port]) besides the gateway\'s own that may send state-changing requests',
        }),
        keepAliveTimeoutMs: Type.Integer({ minimum: 1, default: 5000, description: 'an idle keep-alive connection is closed after this' }),
        requestTimeoutMs: Type.Integer({ minimum: 1, default: 30000, description: 'time to receive a whole request, headers and body' }),
        headersTimeoutMs: Type.Integer({ minimum: 1, default: 10000, description: 'time to receive the request headers (at most requestTimeoutMs)' }),
        publicUrl: Type.Optional(
          Type.String({ pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$', description: 'the gateway\'s own URL as clients reach it: the default token audience and the resource in /.well-known/oauth-protected-resource' }),
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    auth: Type.Object(
      {
        mode: Type.Union([Type.Literal('keys'), Type.Literal('none')], { default: 'keys' }),
        keys: Type.Array(ApiKey, { default: [] }),
        oidc: Type.Array(OidcIssuer, { default: [], description: 'trusted issuers of JWT access tokens, beside the API keys' }),
      },
      { additionalProperties: false, default: {} },
    ),
    state: Type.Object(
      { redis: Type.Optional(Type.String()) },
      { additionalProperties: false, default: {} },
    ),
    audit: Type.Object(
      {
        file: Type.Optional(Type.String()),
        redisStream: Type.Optional(Type.String({ description: 'stream name; with Redis configured records go to toolgate:audit when unset' })),
        redisStreamMaxLen: Type.Optional(Type.Integer({ minimum: 1, description: 'approximate cap on the stream (XADD MAXLEN ~), default 1000000' })),
      },
      { additionalProperties: false, default: { file: 'data/audit.jsonl' } },
    ),
    confirmations: Type.Object(
      {
        ttlSeconds: Type.Integer({ minimum: 1, default: 900 }),
        fourEyes: Type.Boolean({ default: true }),
        webhook: Type.Optional(
          Type.Object(
            { url: Type.String({ pattern: '^https?://' }), headers: Type.Optional(Type.Record(Type.String(), Type.String())) },
            { additionalProperties: false, description: 'POSTed on every new pending confirmation' },
          ),
        ),
        sweepIntervalMs: Type.Integer({ minimum: 100, default: 5000, description: 'how often expired confirmations are settled' }),
      },
      { additionalProperties: false, default: {} },
    ),
    calls: Type.Object(
      {
        retentionSeconds: Type.Integer({ minimum: 1, default: 3600, description: 'how long a finished long-running call, and a large result\'s full text, can be read' }),
        leaseSeconds: Type.Integer({ minimum: 1, default: 30, description: 'a running call whose gateway has not renewed it for this long is shown as interrupted' }),
        progressIntervalMs: Type.Integer({ minimum: 10, default: 2000, description: 'at most one progress event per call per this interval' }),
        maxStoredResultBytes: Type.Integer({ minimum: 1024, default: 8388608, description: 'cap on the full text of a large result kept for paging' }),
      },
      { additionalProperties: false, default: {} },
    ),
    defaults: Type.Object(
      {
        timeoutMs: Type.Object(
          {
            builtin: Type.Integer({ minimum: 1, default: 5000 }),
            http: Type.Integer({ minimum: 1, default: 30000 }),
            mcp: Type.Integer({ minimum: 1, default: 30000 }),
          },
          { additionalProperties: false, default: {} },
        ),
        http: Type.Object(
          { maxResponseBytes: Type.Integer({ minimum: 1, default: 10485760 }) },
          { additionalProperties: false, default: {} },
        ),
        resultGuards: Type.Array(ResultGuardSchema, { default: [{ secrets: 'redact' }, { invisible: 'strip' }], description: 'result guards of every tool, unless its file or entry says otherwise by kind' }),
      },
      { additionalProperties: false, default: {} },
    ),
    limits: Type.Object(
      {
        loopRepeats: Type.Integer({ minimum: 1, default: 3 }),
        loopWindowSeconds: Type.Integer({ minimum: 1, default: 120 }),
        idempotencyTtlSeconds: Type.Integer({ minimum: 1, default: 86400 }),
        rateLimit: Type.Optional(
          Type.Object(
            { requests: Type.Integer({ minimum: 1 }), windowSeconds: Type.Integer({ minimum: 1 }) },
            { additionalProperties: false, description: 'per caller, across all tools (fixed window, shared through Redis)' },
          ),
        ),
        batchMaxCalls: Type.Integer({ minimum: 1, maximum: 1000, default: 64, description: 'tool calls in one POST /v1/calls' }),
        batchConcurrency: Type.Integer({ minimum: 1, maximum: 64, default: 8, description: 'calls of one batch running at once' }),
        maxArgumentDepth: Type.Integer({ minimum: 1, maximum: 1000, default: 64, description: 'nesting levels of objects and arrays a call\'s arguments may have (deeper: 422 INVALID_ARGUMENTS)' }),
        maxResultDepth: Type.Integer({ minimum: 1, maximum: 1000, default: 512, description: 'nesting levels an upstream reply may have (deeper: 502 UPSTREAM_ERROR, not retried)' }),
      },
      { additionalProperties: false, default: {} },
    ),
    metrics: Type.Object(
      { requireKey: Type.Boolean({ default: false }) },
      { additionalProperties: false, default: {} },
    ),
    console: Type.Object(
      {
        enabled: Type.Boolean({ default: true, description: 'serve the approvals console at /console' }),
        oidc: Type.Optional(ConsoleOidc),
      },
      { additionalProperties: false, default: {} },
    ),
    mcp: Type.Object(
      {
        allowedOrigins: Type.Array(Type.String(), { default: [], description: 'joins server.allowedOrigins (one origin policy for every route)' }),
        elicitApproval: Type.Object(
          { tools: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'tool-name globs an MCP client may approve through elicitation' }) },
          { additionalProperties: false, default: {} },
        ),
        toolSearch: Type.Object(
          {
            enabled: Type.Boolean({ default: false, description: 'tools/list shows find_tools, the alwaysList tools and the last search\'s candidates' }),
            k: Type.Integer({ minimum: 1, maximum: 50, default: 5, description: 'candidates a search returns; find_tools { k } may ask for fewer' }),
            alwaysList: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'tool-name globs always listed beside find_tools' }),
          },
          { additionalProperties: false, default: {} },
        ),
        resources: Type.Object(
          {
            maxReadBytes: Type.Integer({ minimum: 1024, default: 1048576, description: 'a resources/read answer above this is cut and paged like a large tool result' }),
            maxSubscriptionsPerSession: Type.Integer({ minimum: 1, maximum: 100000, default: 256, description: 'resources/subscribe beyond this is refused' }),
          },
          { additionalProperties: false, default: {} },
        ),
        sessions: Type.Object(
          {
            perCaller: Type.Integer({ minimum: 1, maximum: 100000, default: 32, description: '2025 /mcp sessions one key or token may hold (also its /sse and listen streams); opening one more closes its least recently used' }),
            max: Type.Integer({ minimum: 1, maximum: 1000000, default: 10000, description: '2025 /mcp sessions in all (with state.redis: across replicas); past it an initialize is 503 with Retry-After, open sessions are kept' }),
            idleSeconds: Type.Integer({ minimum: 1, maximum: 604800, default: 1800, description: 'a 2025 /mcp session with no request and no open GET stream for this long is closed (with state.redis: the record expires)' }),
          },
          { additionalProperties: false, default: {} },
        ),
        startConcurrency: Type.Integer({ minimum: 1, maximum: 1000, default: 8, description: 'MCP servers of tools.d connecting at once (spawn + initialize; start-up, reloads, restarts); the others wait their turn' }),
        toolNames: Type.Union([Type.Literal('provider'), Type.Literal('canonical')], {
          default: 'provider',
          description: "names /mcp and /sse list: 'provider' as ?format=openai ([a-zA-Z0-9_-]{1,64}, what OpenAI and Anthropic accept), 'canonical' the dotted ones; calls accept both",
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    prefilter: Type.Object(
      {
        learn: Type.Object(
          {
            enabled: Type.Boolean({ default: false, description: 'learn from which tool a session calls after a route query or find_tools (term statistics only, never query text)' }),
            windowSeconds: Type.Integer({ minimum: 1, maximum: 86400, default: 120, description: 'a call this soon after the query counts as its answer' }),
          },
          { additionalProperties: false, default: {} },
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    tools: Type.Object(
      {
        dir: Type.String({ default: 'tools.d' }),
        watch: Type.Boolean({ default: true, description: 'reload tools.d on every change in it' }),
        watchDebounceMs: Type.Integer({ minimum: 0, maximum: 5000, default: 100, description: 'quiet time that ends a burst of changes' }),
      },
      { additionalProperties: false, default: {} },
    ),
    tracing: Type.Object(
      {
        enabled: Type.Boolean({ default: false, description: 'OpenTelemetry spans of calls, exported over OTLP/HTTP (JSON)' }),
        endpoint: Type.String({ pattern: '^https?://', default: 'http://127.0.0.1:4318/v1/traces', description: 'the collector\'s OTLP/HTTP traces URL' }),
        serviceName: Type.String({ minLength: 1, default: 'toolgate' }),
        sampleRatio: Type.Number({ minimum: 0, maximum: 1, default: 1, description: 'share of calls without a sampled parent that are traced' }),
        headers: Type.Record(Type.String(), Type.String(), { default: {}, description: 'sent with every export (collector auth)' }),
        exportDelayMs: Type.Integer({ minimum: 1, default: 5000, description: 'how long spans are batched before an export' }),
        exportTimeoutMs: Type.Integer({ minimum: 1, default: 10000 }),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

export type Config = Static<typeof ConfigSchema>;
export type ApiKeyConfig = Static<typeof ApiKey>;
export type OidcIssuerConfig = Static<typeof OidcIssuer>;
export type ConsoleOidcConfig = Static<typeof ConsoleOidc>;
export type Role = Static<typeof Role>;
