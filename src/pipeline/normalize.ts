import { GatewayError, isGatewayError } from '../errors.js';
import { describeAjvError } from '../util/ajv.js';
import { nestsDeeperThan } from '../util/depth.js';
import { pointerSegments } from '../util/source.js';
import { render } from '../util/template.js';
import type { SecretMatcher } from '../audit/secrets.js';
import type { ContentBlock, ToolResult, UpstreamPayload } from '../adapters/types.js';
import type { CompiledTool } from '../tools/types.js';

/**
 * Stage: an upstream payload becomes the ToolResult the model sees: its nesting bounded,
 * outputSchema checked, `result.pick` applied, `result.text` rendered and every secret masked,
 * all before `capResultInfo` cuts it to `result.maxBytes` (so no prefix of a secret survives
 * the cut). The upstream has run by now: a reply it cannot take is UPSTREAM_ERROR, never
 * retried (`transient: false`), never an internal error.
 */
export function normalizeResult(tool: CompiledTool, payload: UpstreamPayload, opts: { maxDepth: number; secrets: SecretMatcher }): ToolResult {
  try {
    if (replyNestsDeeperThan(payload, opts.maxDepth)) throw replyError(`the upstream's reply nests deeper than ${opts.maxDepth} levels (limits.maxResultDepth)`);
    return maskResult(shapeResult(tool, payload), opts.secrets);
  } catch (e) {
    if (isGatewayError(e)) throw e;
    throw replyError(`the upstream's reply could not be processed (${e instanceof Error ? e.name : 'error'})`);
  }
}

function replyNestsDeeperThan(payload: UpstreamPayload, max: number): boolean {
  if (payload.kind === 'text') return false;
  if (payload.kind === 'json') return nestsDeeperThan(payload.data, max);
  // The result object and its content array are the gateway's shape: the limit applies to what they hold.
  const r = payload.result;
  return nestsDeeperThan(r.content, max + 1) || nestsDeeperThan(r.structuredContent, max);
}

function replyError(message: string): GatewayError {
  return new GatewayError('UPSTREAM_ERROR', message, {
    modelMessage: 'The tool ran, but its reply could not be read. Do not call it again with the same arguments; check whether it took effect.',
    details: [{ message }],
    upstream: { transient: false, noEffect: false },
  });
}

/** The result with every secret form masked in its strings; the same object when none occurs. */
export function maskResult(result: ToolResult, secrets: SecretMatcher): ToolResult {
  if (secrets.empty) return result;
  const content = secrets.maskDeep(result.content);
  const structured = result.structuredContent === undefined ? undefined : secrets.maskDeep(result.structuredContent);
  if (content === result.content && structured === result.structuredContent) return result;
  const out: ToolResult = { content, isError: result.isError };
  if (structured !== undefined) out.structuredContent = structured;
  return out;
}

/** The whole result, before the cap: outputSchema checked, `pick` and `text` applied. */
export function shapeResult(tool: CompiledTool, payload: UpstreamPayload): ToolResult {
  if (payload.kind === 'result') {
    checkStructured(tool, payload.result);
    return payload.result;
  }
  if (payload.kind === 'text') {
    checkOutput(tool, payload.text);
    return { content: [{ type: 'text', text: payload.text }], isError: false };
  }
  checkOutput(tool, payload.data);
  const picked = tool.result.pick ? pick(payload.data, tool.result.pick) : payload.data;
  const structured = isPlainObject(picked) ? picked : undefined;
  const text = tool.result.text && structured ? render(tool.result.text, structured) : JSON.stringify(picked ?? null);
  const result: ToolResult = { content: [{ type: 'text', text }], isError: false };
  if (structured) result.structuredContent = structured;
  return result;
}

/**
 * An MCP result against the tool's outputSchema (the server's own, imported, or the tool file's):
 * its structuredContent must match, and a server that declares an object schema must send one, as
 * the MCP spec says. Error results are not checked. (The 1.x SDK client did this check; the v2
 * client does it only from a tools/list cache the pool never fills.)
 */
function checkStructured(tool: CompiledTool, result: ToolResult): void {
  if (!tool.validateOutput || result.isError) return;
  if (result.structuredContent !== undefined) return checkOutput(tool, result.structuredContent);
  if (tool.outputSchema?.['type'] !== 'object') return; // 2026-07-28: a non-object value, kept out of structuredContent (the adapter)
  throw new GatewayError('UPSTREAM_ERROR', `the response of '${tool.name}' has no structuredContent, which its outputSchema requires`, {
    upstream: { transient: false, noEffect: false },
  });
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
 * Caps a result to `maxBytes` in all, with explicit markers the model can read: text blocks are
 * cut; other blocks (image, audio, resource…) that do not fit whole are dropped and named in a
 * marker; a structuredContent that does not fit on its own is dropped with a marker (the capped
 * text still carries the data when it came from a JSON response).
 */
export function capResult(result: ToolResult, maxBytes: number): ToolResult {
  return capResultInfo(result, maxBytes).result;
}

/**
 * capResult, also telling how much of the result's text document (its text blocks joined by
 * newlines: what GET /v1/calls/{id}/result pages through) the capped result shows in full.
 */
export function capResultInfo(result: ToolResult, maxBytes: number): { result: ToolResult; shownBytes: number } {
  let budget = maxBytes;
  let docPos = 0;
  let shownBytes = 0;
  let cut = false;
  let truncated = false;
  const dropped: { type: string; bytes: number }[] = [];
  const content: ContentBlock[] = [];
  for (const block of result.content) {
    const isText = block.type === 'text' && typeof block['text'] === 'string';
    const text = isText ? (block['text'] as string) : '';
    const size = Buffer.byteLength(isText ? text : JSON.stringify(block));
    if (size <= budget) {
      budget -= size;
      content.push(block);
      if (isText && !cut) shownBytes = docPos + size;
    } else if (isText) {
      truncated = true;
      const kept = truncateUtf8(text, budget);
      budget = 0;
      if (!cut) shownBytes = docPos + Buffer.byteLength(kept);
      cut = true;
      content.push({ ...block, text: `${kept}\n[truncated: ${Buffer.byteLength(kept)} of ${size} bytes shown]` });
    } else {
      truncated = true;
      dropped.push({ type: block.type, bytes: size });
    }
    if (isText) docPos += size + 1;
  }
  if (dropped.length > 0) {
    const types = [...new Set(dropped.map((d) => d.type))].join(', ');
    const bytes = dropped.reduce((n, d) => n + d.bytes, 0);
    content.push({ type: 'text', text: `[truncated: ${dropped.length} ${types} block(s) of ${bytes} bytes dropped, over the ${maxBytes}-byte result limit]` });
  }
  const structured = result.structuredContent;
  const structuredFits = structured === undefined || Buffer.byteLength(JSON.stringify(structured)) <= maxBytes;
  if (!truncated && structuredFits) return { result, shownBytes };
  const out: ToolResult = { content, isError: result.isError };
  if (structured && structuredFits) out.structuredContent = structured;
  else if (structured) content.push({ type: 'text', text: `[truncated: structuredContent dropped, over the ${maxBytes}-byte result limit]` });
  return { result: out, shownBytes };
}

function truncateUtf8(text: string, maxBytes: number): string {
  const buf = Buffer.from(text);
  if (buf.length <= maxBytes) return text;
  let end = maxBytes;
  while (end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80) end--; // do not cut a character in half
  return buf.subarray(0, end).toString('utf8');
}
