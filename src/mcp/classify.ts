import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import { describeError, McpPoolError, type McpPoolErrorDetails } from './errors.js';
import { TransportSendError } from './guarded-transport.js';
import { ChildGoneError } from './stdio-transport.js';

/** The JSON-RPC code the 1.x SDK gave a request timeout; kept in `mcpCode` for callers that read it. */
const REQUEST_TIMEOUT = -32001;

/** What the classifier needs to know about the failed request. */
export interface FailureContext {
  server: string;
  tool?: string;
  signal?: AbortSignal;
  /** Why the session ended, if it did (child exit, ping failure…). */
  lostReason?: string;
  stderrTail?: string;
}

/** Turns whatever the SDK or a transport threw into the pool's one error type. */
export function classifyFailure(err: unknown, ctx: FailureContext): McpPoolError {
  if (err instanceof McpPoolError) return err;
  const what = ctx.tool === undefined ? `MCP server '${ctx.server}'` : `tool '${ctx.tool}' of MCP server '${ctx.server}'`;
  const base: McpPoolErrorDetails = { server: ctx.server, mayHaveReachedServer: true };
  if (ctx.tool !== undefined) base.tool = ctx.tool;
  const make = (kind: McpPoolError['kind'], message: string, extra: Partial<McpPoolErrorDetails> = {}): McpPoolError =>
    new McpPoolError(kind, message, { ...base, ...extra }, { cause: err });

  // The SDK reports an abort as a RequestTimeout McpError; the signal tells the truth.
  if (ctx.signal?.aborted) {
    // throwIfAborted() before sending rethrows the reason itself: nothing was sent then.
    return make('aborted', `call to ${what} was aborted`, { mayHaveReachedServer: err !== ctx.signal.reason });
  }
  if (err instanceof TransportSendError) {
    const status = err.cause instanceof SdkHttpError ? err.cause.status : undefined;
    return make('unavailable', `${what}: transport failed: ${describeError(err.cause)}`, {
      mayHaveReachedServer: !neverDelivered(err.cause),
      retryAfterMs: 1000,
      ...(status !== undefined && status > 0 ? { httpStatus: status } : {}),
    });
  }
  if (err instanceof SdkError && !(err instanceof SdkHttpError)) {
    if (err.code === SdkErrorCode.RequestTimeout) {
      return make('timeout', `${what} did not answer within its deadline; the request was cancelled`, { mcpCode: REQUEST_TIMEOUT });
    }
    if (err.code === SdkErrorCode.ConnectionClosed) {
      // lostReason already names the exit and the last stderr line; the full tail goes in details.
      return make('unavailable', `${what}: connection lost during the call: ${ctx.lostReason ?? 'connection closed'}`, {
        retryAfterMs: 1000,
        ...(ctx.stderrTail ? { stderrTail: lastLines(ctx.stderrTail, 4096) } : {}),
      });
    }
    // Protocol.request rejects so when the client has no transport: nothing was sent.
    if (err.code === SdkErrorCode.NotConnected) {
      return make('unavailable', `${what}: not connected`, { mayHaveReachedServer: false, retryAfterMs: 1000 });
    }
    return make('protocol', `${what}: ${err.message}`);
  }
  if (err instanceof ProtocolError) {
    return make('protocol', `${what} answered with an error: ${err.message}`, { mcpCode: err.code });
  }
  // Protocol.request rejects with this plain Error when the client has no transport.
  if (err instanceof Error && err.message === 'Not connected') {
    return make('unavailable', `${what}: not connected`, { mayHaveReachedServer: false, retryAfterMs: 1000 });
  }
  return make('protocol', `${what}: invalid answer: ${describeError(err)}`);
}

/** Whether a transport failure proves the server never processed the request. */
function neverDelivered(cause: unknown): boolean {
  if (cause instanceof ChildGoneError) return true;
  // The HTTP layer refused the POST (unknown session after a server restart, bad request):
  // the JSON-RPC request was not handled.
  if (cause instanceof SdkHttpError) return cause.status >= 400 && cause.status < 500;
  return hasErrorCode(cause, ['ECONNREFUSED', 'EPIPE', 'ERR_STREAM_DESTROYED']);
}

/** Looks for an errno-style code along a short `cause` chain (undici wraps it as `fetch failed`). */
function hasErrorCode(err: unknown, codes: readonly string[]): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (code !== undefined && codes.includes(code)) return true;
    current = current.cause;
  }
  return false;
}

function lastLines(text: string, maxChars = 500): string {
  const trimmed = text.trim();
  return trimmed.length <= maxChars ? trimmed : `…${trimmed.slice(-maxChars)}`;
}
