import type { ClientRequests } from './schema.js';
import type { ValidateFunction } from 'ajv';
import type { Hold } from '../mcp/pins.js';
import type { Role } from '../config/schema.js';
import type { JsonTemplate, Template } from '../util/template.js';
import type { CompiledMatch } from '../routing/match.js';
import type { CompiledGuard } from '../guards/index.js';
import type { ConfirmPolicy } from '../confirm/rule.js';
import type { FallbackFile, SideEffectValue } from './schema.js';
import type { UpstreamCredentials } from '../auth/upstream/spec.js';
import type { CompiledResultGuards } from '../guards/result/compile.js';
import type { RequestPlan } from './openapi/plan.js';
import type { OperationHold } from './openapi/pins.js';

/** The compiled, immutable form of a tool: everything a call needs, prepared at load time. */

export interface HttpTarget {
  readonly kind: 'http';
  readonly method: string;
  readonly url: Template;
  readonly headers: readonly (readonly [string, Template])[];
  readonly body: JsonTemplate | undefined;
  readonly maxResponseBytes: number;
  /** `credentials:` of the backend: the adapter sends the token it yields as Authorization: Bearer. */
  readonly credentials?: UpstreamCredentials | undefined;
  /** Set on an OpenAPI operation's backend: the request is built from this plan (url, headers and body above are not used). */
  readonly openapi?: RequestPlan | undefined;
}
export interface McpTarget {
  readonly kind: 'mcp';
  readonly server: string;
  readonly tool: string;
}
export interface BuiltinTarget {
  readonly kind: 'builtin';
  readonly name: string;
}
export type BackendTarget = HttpTarget | McpTarget | BuiltinTarget;

export interface CompiledBackend {
  readonly id: string;
  readonly weight: number;
  readonly priority: number;
  readonly cost: number;
  /** When set, this backend serves only the requests it matches (and they only such backends). */
  readonly match: CompiledMatch | undefined;
  readonly target: BackendTarget;
  /** Hash of the backend's definition: breaker state survives a reload while it is unchanged. */
  readonly hash: string;
  /** The active health check, when declared (resilience/probes.ts). */
  readonly probe?: CompiledProbe | undefined;
}

export interface CompiledProbe {
  readonly check: { readonly kind: 'http'; readonly url: string; readonly expectStatus: number | undefined } | { readonly kind: 'mcp'; readonly server: string };
  readonly intervalMs: number;
  readonly healthyAfter: number;
  readonly unhealthyAfter: number;
}

export interface CompiledTool {
  readonly name: string;
  /** Name safe for OpenAI and Anthropic ([A-Za-z0-9_-]{1,64}). */
  readonly providerName: string;
  readonly title: string | undefined;
  readonly owner: string | undefined;
  readonly description: string;
  readonly aliases: readonly string[];
  readonly tags: readonly string[];
  readonly examples: readonly string[];
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly outputSchema: Readonly<Record<string, unknown>> | undefined;
  readonly sideEffect: SideEffectValue;
  readonly idempotent: boolean;
  readonly confirm: ConfirmPolicy;
  readonly guards: readonly CompiledGuard[];
  /** Checks on what the tool returns (defaults < file < tool, merged by kind), compiled at load. */
  readonly resultGuards: CompiledResultGuards;
  /** The tool's own `clientRequests` (tool file or server-file override); the server file's apply beneath it (mcp/server-requests.ts). */
  readonly clientRequests?: ClientRequests | undefined;
  readonly timeoutMs: number;
  readonly retry: { readonly attempts: number; readonly backoffMs: number; readonly tryTimeoutMs: number | undefined };
  readonly breaker: {
    readonly failureThreshold: number;
    readonly resetTimeoutMs: number;
    readonly errorThresholdPercentage: number | undefined;
    readonly rollingCountTimeoutMs: number;
    readonly volumeThreshold: number;
  };
  readonly concurrency: number;
  /** Calls of this tool per fixed window, all callers together (tool file `rateLimit`). */
  readonly rateLimit?: { readonly requests: number; readonly windowSeconds: number };
  readonly visibility: { readonly roles: readonly Role[] | undefined; readonly prefilter: boolean };
  readonly redact: readonly string[];
  readonly result: { readonly pick: readonly string[] | undefined; readonly maxBytes: number; readonly text: Template | undefined };
  readonly deprecated: { readonly replacement: string | undefined; readonly message: string | undefined } | undefined;
  readonly async: boolean;
  readonly cacheTtlSeconds: number;
  readonly fallback: FallbackFile | undefined;
  readonly backends: readonly CompiledBackend[];
  readonly validateArgs: ValidateFunction;
  readonly validateOutput: ValidateFunction | undefined;
  readonly source: { readonly file: string; readonly hash: string };
  /** Set on a tool imported from an MCP server file. */
  readonly mcp?: McpImportInfo;
  /** Set on a tool made from an operation of an OpenAPI document (kind: openapi). */
  readonly openapi?: OpenApiImportInfo;
}

/** Where an OpenAPI tool came from, and whether a changed operation holds it. */
export interface OpenApiImportInfo {
  /** The `name` of the kind: openapi file. */
  readonly spec: string;
  readonly operationId: string | undefined;
  readonly method: string;
  readonly path: string;
  /** Pin of the operation's definition in use (see OperationDef.hash). */
  readonly hash: string;
  /**
   * The document now defines the operation otherwise, or its definition has findings (tool
   * poisoning): calls answer TOOL_CHANGED until an admin accepts it. With `oldHash: null` nothing
   * was ever accepted: the tool is not listed at all (see listable()).
   */
  readonly held?: OperationHold;
}

/** Where an imported tool came from, and whether a changed definition holds it. */
export interface McpImportInfo {
  readonly server: string;
  /** The tool's name on its server. */
  readonly tool: string;
  /** Pin of the definition in use (name, title, description, schemas, annotations). */
  readonly hash: string;
  /**
   * A definition is held (it changed, or the definition checks found instructions or invisible
   * characters in it): calls answer TOOL_CHANGED until an admin accepts it. With `oldHash: null`
   * nothing was ever accepted: the tool is not listed at all (see listable()).
   */
  readonly held?: Hold;
}
