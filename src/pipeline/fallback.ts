import type { GatewayError } from '../errors.js';
import type { ToolResult } from '../adapters/types.js';
import type { CompiledTool } from '../tools/types.js';

/** Failures that a fallback may answer for: the backends failed, not the request. */
const FALLBACK_CODES = new Set(['UPSTREAM_ERROR', 'TIMEOUT', 'UNAVAILABLE', 'CIRCUIT_OPEN', 'BACKEND_DISABLED']);

export type FallbackPlan =
  | { kind: 'tool'; tool: string }
  | { kind: 'result'; result: ToolResult }
  | { kind: 'message'; result: ToolResult }
  | { kind: 'cache' };

/** Stage: what the tool's `fallback` says to do about this failure, if anything. */
export function fallbackFor(tool: CompiledTool, err: GatewayError): FallbackPlan | undefined {
  const fb = tool.fallback;
  if (!fb || !FALLBACK_CODES.has(err.code)) return undefined;
  if ('tool' in fb) return { kind: 'tool', tool: fb.tool };
  if ('cache' in fb) return { kind: 'cache' }; // the pipeline looks up the last good result
  if ('message' in fb) return { kind: 'message', result: { content: [{ type: 'text', text: fb.message }], isError: false } };
  const value = fb.result;
  const structured = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  const result: ToolResult = { content: [{ type: 'text', text: typeof value === 'string' ? value : JSON.stringify(value) }], isError: false };
  if (structured) result.structuredContent = structured;
  return { kind: 'result', result };
}
