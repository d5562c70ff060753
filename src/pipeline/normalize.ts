import { GatewayError } from '../errors.js';
import { describeAjvError } from '../util/ajv.js';
import { pointerSegments } from '../util/source.js';
import { render } from '../util/template.js';
import type { ToolResult, UpstreamPayload } from '../adapters/types.js';
import type { CompiledTool } from '../tools/types.js';

/**
 * Stage: an upstream payload becomes the ToolResult the model sees: outputSchema checked,
 * `result.pick` applied, `result.text` rendered, and the text capped at `result.maxBytes`.
 */
export function normalizeResult(tool: CompiledTool, payload: UpstreamPayload): ToolResult {
  if (payload.kind === 'result') return capResult(payload.result, tool.result.maxBytes);
  if (payload.kind === 'text') {
    checkOutput(tool, payload.text);
    return capResult({ content: [{ type: 'text', text: payload.text }], isError: false }, tool.result.maxBytes);
  }
  checkOutput(tool, payload.data);
  const picked = tool.result.pick ? pick(payload.data, tool.result.pick) : payload.data;
  const structured = isPlainObject(picked) ? picked : undefined;
  const text = tool.result.text && structured ? render(tool.result.text, structured) : JSON.stringify(picked ?? null);
  const result: ToolResult = { content: [{ type: 'text', text }], isError: false };
  if (structured) result.structuredContent = structured;
  return capResult(result, tool.result.maxBytes);
}

function checkOutput(tool: CompiledTool, data: unknown): void {
  const validate = tool.validateOutput;
  if (!validate || validate(data)) return;
  const details = (validate.errors ?? []).slice(0, 10).map((e) => {
    const d = describeAjvError(e);
    return { path: d.path || '/', message: d.message };
  });
  throw new GatewayError('UPSTREAM_ERROR', `the response of '${tool.name}' does not match its outputSchema`, {
    details,
    upstream: { transient: false, noEffect: false },
  });
}

/** Keeps the values at the given JSON pointers, each under its last segment's name. */
function pick(data: unknown, pointers: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of pointers) {
    const segs = pointerSegments(p);
    let cur: unknown = data;
    for (const s of segs) {
      cur = cur !== null && typeof cur === 'object' && Object.hasOwn(cur, s) ? (cur as Record<string, unknown>)[s] : undefined;
    }
    if (cur !== undefined) out[segs[segs.length - 1] ?? 'value'] = cur;
  }
  return out;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Caps the text blocks to `maxBytes` in all, with an explicit marker the model can read; a
 * structuredContent too large to fit is dropped (the capped text still carries the data).
 */
export function capResult(result: ToolResult, maxBytes: number): ToolResult {
  let budget = maxBytes;
  let truncated = false;
  const content = result.content.map((block) => {
    if (block.type !== 'text' || typeof block['text'] !== 'string') return block;
    const text = block['text'];
    const size = Buffer.byteLength(text);
    if (size <= budget) {
      budget -= size;
      return block;
    }
    truncated = true;
    const kept = truncateUtf8(text, budget);
    budget = 0;
    return { ...block, text: `${kept}\n[truncated: ${Buffer.byteLength(kept)} of ${size} bytes shown]` };
  });
  if (!truncated) return result;
  const out: ToolResult = { content, isError: result.isError };
  if (result.structuredContent && Buffer.byteLength(JSON.stringify(result.structuredContent)) <= maxBytes) {
    out.structuredContent = result.structuredContent;
  }
  return out;
}

function truncateUtf8(text: string, maxBytes: number): string {
  const buf = Buffer.from(text);
  if (buf.length <= maxBytes) return text;
  let end = maxBytes;
  while (end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80) end--; // do not cut a character in half
  return buf.subarray(0, end).toString('utf8');
}
