import type { CallToolResult } from '@modelcontextprotocol/client';

/**
 * What went wrong with an MCP call, in the terms the gateway maps to its codes:
 * - `timeout`: the call's deadline passed after the request was sent (the server was sent
 *   `notifications/cancelled`) → TIMEOUT.
 * - `unavailable`: no session (connecting, restarting, removed), the in-flight limit and its
 *   queue are full, or the session broke under the call → UNAVAILABLE (Retry-After from
 *   `retryAfterMs`). A disconnect is not a failure of the tool.
 * - `tool_error`: the tool answered `isError: true`; the message is the tool's text and
 *   `details.result` holds the untouched result → UPSTREAM_ERROR.
 * - `protocol`: the server answered with a JSON-RPC error or an invalid message → UPSTREAM_ERROR.
 * - `aborted`: the caller's AbortSignal fired (the server was sent `notifications/cancelled`).
 */
export type McpPoolErrorKind = 'timeout' | 'unavailable' | 'tool_error' | 'protocol' | 'aborted';

/** Facts about a failed call; no HTTP shapes here, the gateway's error handler makes those. */
export interface McpPoolErrorDetails {
  server: string;
  tool?: string;
  /**
   * False only when the request certainly never reached the server (queued, waiting for a
   * session, refused connection): the call may then move elsewhere even when not idempotent.
   */
  mayHaveReachedServer: boolean;
  /** A hint for Retry-After on `unavailable`. */
  retryAfterMs?: number;
  /** JSON-RPC error code of an McpError (`protocol`, `timeout`). */
  mcpCode?: number;
  /** HTTP status of a failed POST on HTTP transports. */
  httpStatus?: number;
  /** The tool's own result on `tool_error`. */
  result?: CallToolResult;
  /** The last lines a stdio server wrote to stderr, when it died. */
  stderrTail?: string;
}

/** The one error type thrown by the MCP pool. Check `kind`, never the message. */
export class McpPoolError extends Error {
  override readonly name = 'McpPoolError';

  constructor(
    readonly kind: McpPoolErrorKind,
    message: string,
    readonly details: McpPoolErrorDetails,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Type guard for callers that catch `unknown`. */
export function isMcpPoolError(err: unknown): err is McpPoolError {
  return err instanceof McpPoolError;
}

/** Text of an error-ish value for messages, with the cause that says why ("fetch failed"
 * alone does not: "fetch failed (connect ECONNREFUSED 127.0.0.1:3001)" does). */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? err.cause.message : undefined;
  return cause && !err.message.includes(cause) ? `${err.message} (${cause})` : err.message;
}
