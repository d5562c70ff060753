/**
 * The one catalogue of coded errors (SPEC §3). Every failure the gateway reports to a
 * client is a GatewayError built from this table, and one error handler shapes it.
 */

interface ErrorDef {
  readonly status: number;
  readonly retryable: boolean;
  /** Default sentence for the model: what failed and what it may do next. */
  readonly modelMessage: string;
}

export const ERROR_CATALOGUE = {
  BAD_REQUEST: { status: 400, retryable: false, modelMessage: 'The request was malformed. Fix the request body and send it again.' },
  UNAUTHENTICATED: { status: 401, retryable: false, modelMessage: 'The gateway did not accept the credentials. A valid API key is needed; do not retry without one.' },
  FORBIDDEN: { status: 403, retryable: false, modelMessage: 'This call is not allowed for this caller. Do not retry it; choose another tool or ask the user.' },
  TOOL_NOT_FOUND: { status: 404, retryable: false, modelMessage: 'No tool has that name. Use one of the listed tools instead.' },
  NOT_FOUND: { status: 404, retryable: false, modelMessage: 'Nothing was found with that id. Check the id before asking again.' },
  CONFLICT: { status: 409, retryable: false, modelMessage: 'This request conflicts with one already made. Do not repeat it; check the earlier result.' },
  CONFIRMATION_EXPIRED: { status: 410, retryable: false, modelMessage: 'The confirmation expired before it was decided. Call the tool again if it is still needed.' },
  REQUEST_TIMEOUT: { status: 408, retryable: true, modelMessage: 'The request did not arrive in time and the connection was closed. Send it again.' },
  PAYLOAD_TOO_LARGE: { status: 413, retryable: false, modelMessage: 'The request is too large. Send smaller arguments.' },
  URI_TOO_LONG: { status: 414, retryable: false, modelMessage: 'A part of the URL is too long. Use a shorter name or id.' },
  INVALID_ARGUMENTS: { status: 422, retryable: false, modelMessage: 'The arguments do not match the tool\'s input schema. Fix the listed fields and call again.' },
  HEADERS_TOO_LARGE: { status: 431, retryable: false, modelMessage: 'The request headers are too large. Send the request with smaller headers.' },
  RATE_LIMITED: { status: 429, retryable: true, modelMessage: 'Too many calls. Wait before calling this tool again.' },
  LOOP_DETECTED: { status: 429, retryable: false, modelMessage: 'The same call was repeated too many times. Stop repeating it and change approach.' },
  UPSTREAM_ERROR: { status: 502, retryable: false, modelMessage: 'The tool failed while handling the call. Check the arguments, or try another approach.' },
  RESULT_REFUSED: { status: 502, retryable: false, modelMessage: 'The tool ran, but the gateway withheld its result because a result guard refused it. Do not call it again with the same arguments; tell the user.' },
  CIRCUIT_OPEN: { status: 503, retryable: true, modelMessage: 'The tool is temporarily unavailable after repeated failures. Try again later or use another tool.' },
  BACKEND_DISABLED: { status: 503, retryable: false, modelMessage: 'The tool is disabled by its operator because its credentials were refused. Use another tool or tell the user.' },
  UNAVAILABLE: { status: 503, retryable: true, modelMessage: 'The gateway cannot run this call right now. Try again shortly.' },
  TOOL_CHANGED: { status: 503, retryable: false, modelMessage: 'The tool changed on its server and is held until an operator reviews the change. Use another tool or tell the user.' },
  TIMEOUT: { status: 504, retryable: true, modelMessage: 'The tool did not answer in time and the call was stopped. Try again later or with a smaller request.' },
  CANCELLED: { status: 409, retryable: false, modelMessage: 'The call was cancelled before it finished. Call the tool again only if it is still needed.' },
  INTERRUPTED: { status: 503, retryable: false, modelMessage: 'The gateway stopped while the call was running, so its outcome is unknown. Check whether it took effect before calling again.' },
  INTERNAL: { status: 500, retryable: true, modelMessage: 'The gateway hit an internal error. Try again; if it persists, tell the user.' },
} as const satisfies Record<string, ErrorDef>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export interface ErrorDetail {
  readonly path?: string;
  readonly message: string;
  readonly [key: string]: unknown;
}

/** What an adapter knows about an upstream failure: drives retries, failover and breakers. */
export interface UpstreamFailure {
  /** Worth trying again (connect error, timeout of one try, 5xx, 429). */
  readonly transient: boolean;
  /** The request cannot have had an effect (connection refused, 401/403): safe to fail over even when not idempotent. */
  readonly noEffect: boolean;
  /** The upstream refused our credentials: the backend is disabled until its file changes. */
  readonly disable?: boolean;
  readonly status?: number;
  readonly retryAfterMs?: number;
  /** Retried like any transient failure, but not counted by the backend's breaker (an MCP session being re-established says nothing about the tool). */
  readonly notCountedByBreaker?: boolean;
}

export interface GatewayErrorOptions {
  upstream?: UpstreamFailure;
  modelMessage?: string;
  details?: readonly ErrorDetail[];
  retryAfterSeconds?: number;
  /** A 403 a token with these scopes would not get (RFC 6750 `insufficient_scope`; empty: no scope would help, a role is missing). */
  insufficientScope?: readonly string[];
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  readonly modelMessage: string;
  readonly details: readonly ErrorDetail[];
  readonly retryAfterSeconds: number | undefined;
  readonly upstream: UpstreamFailure | undefined;
  readonly insufficientScope: readonly string[] | undefined;

  constructor(code: ErrorCode, message: string, opts: GatewayErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    const def = ERROR_CATALOGUE[code];
    this.name = 'GatewayError';
    this.code = code;
    this.status = def.status;
    this.retryable = def.retryable;
    this.modelMessage = opts.modelMessage ?? def.modelMessage;
    this.details = opts.details ?? [];
    this.retryAfterSeconds = opts.retryAfterSeconds;
    this.upstream = opts.upstream;
    this.insufficientScope = opts.insufficientScope;
  }

  /** The SPEC §3 error body. */
  toBody(): ErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        modelMessage: this.modelMessage,
        retryable: this.retryable,
        details: this.details,
      },
    };
  }
}

export interface ErrorBody {
  error: {
    code: ErrorCode;
    message: string;
    modelMessage: string;
    retryable: boolean;
    details: readonly ErrorDetail[];
  };
}

export function isGatewayError(e: unknown): e is GatewayError {
  return e instanceof GatewayError;
}
