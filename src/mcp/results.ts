import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { McpPoolError } from './errors.js';

/** What Client.callTool resolves with. */
export type CallToolAnswer = Awaited<ReturnType<Client['callTool']>>;

const TOOL_ERROR_TEXT_MAX = 4096;

/**
 * Narrows a tools/call answer to the current result form. The SDK's return type also admits
 * the pre-2025 `{ toolResult }` form, which its default result schema never yields.
 */
export function hasContent(answer: CallToolAnswer): answer is CallToolAnswer & CallToolResult {
  return Array.isArray(answer['content']);
}

/**
 * An `isError: true` result as the pool's `tool_error`: the message is the tool's text
 * (capped), `details.result` the untouched result for callers that pass it through.
 */
export function toolError(server: string, tool: string, result: CallToolResult): McpPoolError {
  const text = result.content
    .flatMap((item) => (item.type === 'text' ? [item.text] : []))
    .join('\n')
    .trim();
  const message = !text
    ? 'the tool reported an error without text'
    : text.length > TOOL_ERROR_TEXT_MAX ? `${text.slice(0, TOOL_ERROR_TEXT_MAX)}…` : text;
  return new McpPoolError('tool_error', message, { server, tool, mayHaveReachedServer: true, result });
}
