/**
 * Why /mcp or /sse refused a message, as a bounded label set for
 * `toolgate_mcp_protocol_errors_total{reason}`.
 */
export const PROTOCOL_ERROR_REASONS = [
  'parse_error',
  'invalid_request',
  'invalid_params',
  'unsupported_version',
  'header_mismatch',
  'session_required',
  'session_not_found',
  'session_on_modern',
  'method_not_found',
  'method_not_allowed',
  'media_type',
  'too_large',
  'too_deep',
  'too_many_sessions',
  'too_many_subscriptions',
  'other',
] as const;
export type ProtocolErrorReason = (typeof PROTOCOL_ERROR_REASONS)[number];

const KNOWN_REVISIONS = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'];

/** The reason a JSON-RPC error answer stands for, from its HTTP status, code and message. */
export function reasonOf(status: number, code: number | undefined, message: string): ProtocolErrorReason {
  // The SDK answers an unknown method of a Modern request with 404 too: not a missing session.
  if (code === -32601) return 'method_not_found';
  if (status === 404) return 'session_not_found';
  if (status === 405) return 'method_not_allowed';
  if (status === 406 || status === 415) return 'media_type';
  if (status === 413) return 'too_large';
  if (code === -32022 || /unsupported protocol version/i.test(message)) return 'unsupported_version';
  // The SDK's answer to a version header naming no revision it knows, on a message without an envelope.
  const named = /MCP-Protocol-Version header names protocol revision (\S+?),/.exec(message)?.[1];
  if (named !== undefined && !KNOWN_REVISIONS.includes(named)) return 'unsupported_version';
  if (code === -32020) return 'header_mismatch';
  if (code === -32700) return 'parse_error';
  if (/session id|mcp-session-id|not initialized/i.test(message)) return 'session_required';
  if (code === -32602) return 'invalid_params';
  if (code === -32600 || code === -32000) return 'invalid_request';
  return 'other';
}

/**
 * The reason behind an SDK answer that refused the request (4xx), read from its JSON-RPC error
 * body; undefined for anything else. Only error answers are read, so the success path pays nothing.
 */
export async function refusalReason(res: Response): Promise<ProtocolErrorReason | undefined> {
  if (res.status < 400 || res.status >= 500) return undefined;
  let code: number | undefined;
  let message = '';
  try {
    const body = (await res.clone().json()) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.code === 'number') code = body.error.code;
    if (typeof body.error?.message === 'string') message = body.error.message;
  } catch {
    // not JSON: the status alone tells
  }
  return reasonOf(res.status, code, message);
}
