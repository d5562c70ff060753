import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { McpPoolError } from './errors.js';

/** What Client.callTool resolves with. */
export type CallToolAnswer = Awaited<ReturnType<Client['callTool']>>;

export const TOOL_ERROR_TEXT_MAX = 4096;

/**
 * Narrows a tools/call answer to the current result form. The SDK's return type also admits
 * the pre-2025 `{ toolResult }` form, which its default result schema never yields.
 */
export function hasContent(answer: CallToolAnswer): answer is CallToolAnswer & CallToolResult {
  return Array.isArray(answer['content']);
}

/** The text of an `isError: true` result, whole (its text items joined); empty when it has none. */
export function toolErrorText(result: CallToolResult): string {
  return result.content
    .flatMap((item) => (item.type === 'text' ? [item.text] : []))
    .join('\n')
    .trim();
}

/**
 * An `isError: true` result as the pool's `tool_error`: the message is the tool's text
 * (capped), `details.result` the untouched result for callers that pass it through (and that
 * mask secrets before they cut: the adapter rebuilds its messages from it).
 */
export function toolError(server: string, tool: string, result: CallToolResult): McpPoolError {
  const text = toolErrorText(result);
  const message = !text
    ? 'the tool reported an error without text'
    : text.length > TOOL_ERROR_TEXT_MAX ? `${text.slice(0, TOOL_ERROR_TEXT_MAX)}…` : text;
  return new McpPoolError('tool_error', message, { server, tool, mayHaveReachedServer: true, result });
}
