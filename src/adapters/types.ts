import type { CompiledBackend, CompiledTool } from '../tools/types.js';
import type { Cancel } from '../util/cancel.js';
import type { Caller } from '../auth/caller.js';
import type { ClientChannel } from '../mcp/server-requests.js';

/** The result shape every call returns to its client (MCP's CallToolResult, trimmed). */
export interface ContentBlock {
  readonly type: string;
  readonly [key: string]: unknown;
}
export interface ToolResult {
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError: boolean;
}

/** What an upstream gave back, before normalization (pick, text, size cap). */
export type UpstreamPayload =
  | { readonly kind: 'json'; readonly data: unknown }
  | { readonly kind: 'text'; readonly text: string; readonly contentType?: string }
  | { readonly kind: 'result'; readonly result: ToolResult };

export interface AdapterRequest {
  readonly tool: CompiledTool;
  readonly backend: CompiledBackend;
  readonly args: Readonly<Record<string, unknown>>;
  /** Aborted when the call's deadline passes or the caller goes away: the adapter must stop the upstream work. */
  readonly cancel: Cancel;
  /** Epoch ms by which the whole call must end. */
  readonly deadline: number;
  readonly requestId: string;
  /** Told of the upstream's progress (MCP progress notifications), for long-running calls' events. */
  readonly onProgress?: ((p: ProgressNote) => void) | undefined;
  /** W3C trace context of this attempt (`traceparent`, maybe `tracestate`) for the upstream; set only when tracing is on. */
  readonly trace?: Readonly<Record<string, string>> | undefined;
  /** The secret values: upstream text the adapter cuts (error bodies) is masked before the cut. */
  readonly secrets?: ReadonlySet<string> | undefined;
  /** Who is calling: upstream credentials that act for the user (token exchange, passthrough) read its token. */
  readonly caller?: Caller | undefined;
  /** The MCP client whose call this is (toolgate's /mcp): an MCP server's sampling, elicitation and roots requests go to it. */
  readonly clientChannel?: ClientChannel | undefined;
  /** The pipeline's session tag of the call (audit of server requests). */
  readonly sessionId?: string | undefined;
}

/** One progress notice from an upstream. */
export interface ProgressNote {
  readonly progress: number;
  readonly total?: number | undefined;
  readonly message?: string | undefined;
}

/**
 * One kind of backend (http, mcp, builtin). An adapter throws GatewayError with `upstream`
 * set for upstream failures, and must honour `cancel` so a timeout really ends the work.
 */
export interface ToolAdapter {
  call(req: AdapterRequest): Promise<UpstreamPayload>;
  close?(): Promise<void>;
}
