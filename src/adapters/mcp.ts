import type { CallToolResult } from '@modelcontextprotocol/client';
import { GatewayError } from '../errors.js';
import { isMcpPoolError, type McpPool, type McpPoolError } from '../mcp/pool.js';
import { TOOL_ERROR_TEXT_MAX, toolErrorText } from '../mcp/results.js';
import { secretMatcher } from '../audit/secrets.js';
import type { McpTarget } from '../tools/types.js';
import type { Cancel } from '../util/cancel.js';
import type { AdapterRequest, ContentBlock, ToolAdapter, ToolResult, UpstreamPayload } from './types.js';

const MODEL_TEXT_MAX = 1000;
const NO_SECRETS: ReadonlySet<string> = new Set();

/**
 * The pool gets the call's deadline a little early, so that its own verdict (UNAVAILABLE with
 * Retry-After while a server restarts, or TIMEOUT) arrives before the pipeline's deadline
 * aborts it: a restart must not count against the tool's breaker as a timeout would.
 */
function poolDeadline(deadline: number): number {
  const left = deadline - Date.now();
  return deadline - Math.min(250, Math.max(10, left * 0.05));
}

/**
 * Calls MCP backends over the gateway's pool: one shared session per server, the call's
 * deadline and AbortSignal passed on (the server is sent `notifications/cancelled` when
 * either ends the call). Results pass through whole (text, image, resource, structured
 * content); normalize caps them at `result.maxBytes`.
 */
export class McpAdapter implements ToolAdapter {
  constructor(private readonly pool: McpPool) {}

  async call(req: AdapterRequest): Promise<UpstreamPayload> {
    const t = req.backend.target as McpTarget;
    if (!this.pool.status(t.server)) {
      throw new GatewayError('UNAVAILABLE', `no MCP server named '${t.server}' is declared in tools.d`, {
        upstream: { transient: false, noEffect: true },
      });
    }
    try {
      const clientRequests = { channel: req.clientChannel, policy: req.tool.clientRequests, who: { caller: req.caller?.id, tool: req.tool.name, requestId: req.requestId, sessionId: req.sessionId } };
      const result = await this.pool.callTool(t.server, t.tool, { ...req.args }, { deadline: poolDeadline(req.deadline), cancel: req.cancel, clientRequests, ...(req.onProgress ? { onProgress: req.onProgress } : {}), ...(req.trace ? { meta: req.trace } : {}) });
      return { kind: 'result', result: toToolResult(result) };
    } catch (err) {
      if (!isMcpPoolError(err)) throw err;
      throw toGatewayError(err, req.cancel, req.secrets);
    }
  }
}

function toToolResult(result: CallToolResult): ToolResult {
  const content: ContentBlock[] = result.content.map((block) => ({ ...block }));
  const out: ToolResult = { content, isError: false };
  // Our result shape carries an object; a 2026-07-28 server may send any JSON value, then only its content passes.
  const structured = result.structuredContent;
  if (typeof structured === 'object' && structured !== null && !Array.isArray(structured)) out.structuredContent = { ...structured };
  return out;
}

/** The pool's error kinds as catalogue errors; `upstream` tells the attempt loop what may happen next. */
function toGatewayError(err: McpPoolError, cancel: Cancel, secrets: ReadonlySet<string> | undefined): Error {
  const { server, tool } = err.details;
  const where = `MCP server '${server}'${tool ? ` (tool '${tool}')` : ''}`;
  switch (err.kind) {
    case 'aborted':
      // The pipeline aborted it (deadline, caller gone, one try's limit): its own reason answers.
      return cancel.reason ?? new GatewayError('UNAVAILABLE', `the call to ${where} was cancelled`);
    case 'timeout':
      return new GatewayError('TIMEOUT', `${where} did not answer in time`, { upstream: { transient: true, noEffect: false }, cause: err });
    case 'unavailable': {
      const retryAfterMs = err.details.retryAfterMs;
      return new GatewayError('UNAVAILABLE', err.message, {
        ...(retryAfterMs !== undefined ? { retryAfterSeconds: retryAfterMs / 1000 } : {}),
        // Not the tool's fault: retried (or moved when it cannot have run), never counted by the breaker.
        upstream: { transient: true, noEffect: !err.details.mayHaveReachedServer, notCountedByBreaker: true, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) },
        cause: err,
      });
    }
    case 'tool_error': {
      // The tool's whole text, masked before it is cut (a cut must not leave a secret's prefix).
      const full = (err.details.result && toolErrorText(err.details.result)) || err.message;
      const mask = secretMatcher(secrets ?? NO_SECRETS);
      const message = mask.cut(full, TOOL_ERROR_TEXT_MAX);
      return new GatewayError('UPSTREAM_ERROR', `${where} reported an error: ${message}`, {
        modelMessage: `The tool reported an error: ${mask.cut(full, MODEL_TEXT_MAX)}`,
        details: [{ message, server, ...(tool ? { tool } : {}) }],
        upstream: { transient: false, noEffect: false },
        cause: err,
      });
    }
    case 'protocol': {
      // A JSON-RPC error's text is the server's too: masked and cut like a tool's error text.
      const message = secretMatcher(secrets ?? NO_SECRETS).cut(err.message, TOOL_ERROR_TEXT_MAX);
      return new GatewayError('UPSTREAM_ERROR', `${where} failed: ${message}`, {
        details: [{ message, server, ...(err.details.mcpCode !== undefined ? { mcpCode: err.details.mcpCode } : {}) }],
        upstream: { transient: false, noEffect: false },
        cause: err,
      });
    }
  }
}

