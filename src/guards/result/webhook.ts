import { Agent, request } from 'undici';
import type { ToolResult } from '../../adapters/types.js';
import { createAjv } from '../../util/ajv.js';
import { pointerSegments } from '../../util/source.js';
import type { CompiledWebhook } from './compile.js';

/**
 * The external guard service (`resultGuards: [{ webhook: { url, timeoutMs, failOpen } }]`).
 * Request: `POST url`, `content-type: application/json`, body `{ tool, callId, result }` (the
 * result after the built-in guards: already redacted). Answer: a 2xx JSON body, at most
 * MAX_ANSWER_BYTES, one of `{ action: "allow" }`, `{ action: "redact", spans: [{ block, start,
 * end, kind? }] }` (UTF-8 byte offsets [start, end) in the text of content block `block`, or
 * in the string at JSON pointer `path`),
 * `{ action: "refuse", reason? }`. Anything else (another status, a redirect, garbage, too big,
 * too slow) is a failure: `failOpen` decides.
 */

export const MAX_ANSWER_BYTES = 64 * 1024;
const MAX_SPANS = 1000;

export interface WebhookSpan {
  readonly block?: number;
  readonly path?: string;
  readonly start: number;
  readonly end: number;
  readonly kind?: string;
}

export type Verdict =
  | { readonly action: 'allow' }
  | { readonly action: 'redact'; readonly spans: readonly WebhookSpan[] }
  | { readonly action: 'refuse'; readonly reason: string }
  | { readonly action: 'failed'; readonly reason: string };

const ajv = createAjv({ allErrors: false });
const validateAnswer = ajv.compile<{ action: 'allow' } | { action: 'redact'; spans: WebhookSpan[] } | { action: 'refuse'; reason?: string }>({
  oneOf: [
    { type: 'object', required: ['action'], properties: { action: { const: 'allow' } } },
    {
      type: 'object',
      required: ['action', 'spans'],
      properties: {
        action: { const: 'redact' },
        spans: {
          type: 'array',
          maxItems: MAX_SPANS,
          items: {
            type: 'object',
            required: ['start', 'end'],
            oneOf: [{ required: ['block'] }, { required: ['path'] }],
            additionalProperties: false,
            properties: {
              block: { type: 'integer', minimum: 0 },
              path: { type: 'string', pattern: '^/(content|structuredContent)(/|$)', maxLength: 2048 },
              start: { type: 'integer', minimum: 0 },
              end: { type: 'integer', minimum: 0 },
              kind: { type: 'string', pattern: '^[a-z0-9_]{1,32}$' },
            },
          },
        },
      },
    },
    { type: 'object', required: ['action'], properties: { action: { const: 'refuse' }, reason: { type: 'string' } } },
  ],
});

/** Drops an answer's body (undici's body errors when destroyed: the error is expected, not a crash). */
function discard(body: { on(event: 'error', f: () => void): unknown; destroy(): unknown }): void {
  body.on('error', () => undefined);
  body.destroy();
}

let agent: Agent | undefined;
const dispatcher = () => (agent ??= new Agent({ connections: 64 }));

/** Asks the service; never throws: every failure is a `failed` verdict, within min(timeoutMs, the call's deadline). */
export async function askWebhook(
  hook: CompiledWebhook,
  body: { tool: string; callId: string; result: ToolResult },
  ctx: { readonly deadline: number; readonly signal?: AbortSignal | undefined },
): Promise<Verdict> {
  const budget = Math.min(hook.timeoutMs, ctx.deadline - Date.now());
  if (budget <= 0) return { action: 'failed', reason: "no time left before the call's deadline" };
  if (ctx.signal?.aborted) return { action: 'failed', reason: 'the call was cancelled' };
  const abort = new AbortController();
  let why = `no answer within ${budget} ms`;
  const timer = setTimeout(() => abort.abort(), budget);
  const onCancel = () => {
    why = 'the call was cancelled';
    abort.abort();
  };
  ctx.signal?.addEventListener('abort', onCancel, { once: true });
  try {
    const res = await request(hook.url, {
      method: 'POST',
      headers: { ...hook.headers, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      signal: abort.signal,
      dispatcher: dispatcher(),
    });
    if (res.statusCode < 200 || res.statusCode > 299) {
      discard(res.body);
      return { action: 'failed', reason: `it answered HTTP ${res.statusCode}` };
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) {
        discard(res.body);
        return { action: 'failed', reason: `its answer is over ${MAX_ANSWER_BYTES} bytes` };
      }
      chunks.push(chunk);
    }
    let answer: unknown;
    try {
      answer = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return { action: 'failed', reason: 'its answer is not JSON' };
    }
    if (!validateAnswer(answer)) return { action: 'failed', reason: 'its answer is not one of allow, redact or refuse' };
    if (answer.action === 'refuse') return { action: 'refuse', reason: (answer.reason ?? 'no reason given').slice(0, 200) };
    return answer;
  } catch {
    return { action: 'failed', reason: abort.signal.aborted ? why : 'it could not be reached' };
  } finally {
    clearTimeout(timer);
    ctx.signal?.removeEventListener('abort', onCancel);
  }
}

/** Redacted values at least this long are also replaced wherever else they occur in the result. */
const PROPAGATE_MIN = 4;
/** Keys of a content block that are not text (base64 payloads, type tags): spans may not point there. */
const NOT_TEXT = new Set(['type', 'mimeType', 'data', 'blob']);

/**
 * The result with each span replaced by `[REDACTED:<kind>]` (kind default `webhook`), offsets
 * widened to whole characters and overlaps merged. A span names its string by `block` (the text
 * of content block n) or `path` (a JSON pointer to any string of the result, e.g.
 * `/structuredContent/user/note`). Each redacted value of PROPAGATE_MIN characters or more is
 * then replaced wherever else it occurs in the result's strings (a JSON result's text and its
 * structuredContent carry the same values). Undefined when a span does not fit.
 */
export function applySpans(
  result: ToolResult,
  spans: readonly WebhookSpan[],
): { result: ToolResult; located: { path: string; start: number; end: number }[] } | undefined {
  if (spans.length === 0) return { result, located: [] };
  const byPath = new Map<string, WebhookSpan[]>();
  for (const s of spans) {
    const path = s.path ?? (s.block !== undefined ? `/content/${s.block}/text` : undefined);
    if (path === undefined || (s.path !== undefined && s.block !== undefined) || s.start >= s.end) return undefined;
    const list = byPath.get(path);
    if (list) list.push(s);
    else byPath.set(path, [s]);
  }
  const copy = structuredClone({ content: result.content, structuredContent: result.structuredContent }) as { content: unknown[]; structuredContent?: unknown };
  const located: { path: string; start: number; end: number }[] = [];
  const removed = new Map<string, string>();
  for (const [path, list] of byPath) {
    const target = resolve(copy, path);
    if (!target) return undefined;
    const buf = Buffer.from(target.get(), 'utf8');
    if (list.some((s) => s.end > buf.length)) return undefined;
    const ranges = list
      .map((s) => {
        let start = s.start;
        let end = s.end;
        while (start > 0 && ((buf[start] ?? 0) & 0xc0) === 0x80) start--;
        while (end < buf.length && ((buf[end] ?? 0) & 0xc0) === 0x80) end++;
        return { start, end, kind: s.kind, from: s };
      })
      .sort((a, b) => a.start - b.start);
    const merged: typeof ranges = [];
    for (const r of ranges) {
      const last = merged.at(-1);
      if (last && r.start <= last.end) last.end = Math.max(last.end, r.end);
      else merged.push({ ...r });
    }
    for (const r of ranges) located.push({ path, start: r.from.start, end: r.from.end });
    const parts: Buffer[] = [];
    let pos = 0;
    for (const r of merged) {
      const placeholder = `[REDACTED:${r.kind ?? 'webhook'}]`;
      const value = buf.subarray(r.start, r.end).toString('utf8');
      if (value.length >= PROPAGATE_MIN) removed.set(value, placeholder);
      parts.push(buf.subarray(pos, r.start), Buffer.from(placeholder));
      pos = r.end;
    }
    parts.push(buf.subarray(pos));
    target.set(Buffer.concat(parts).toString('utf8'));
  }
  const everywhere = replacerOf(removed);
  const content = copy.content.map((b) => replaceStrings(b, everywhere, true)) as ToolResult['content'];
  const out: ToolResult = { content, isError: result.isError };
  if (copy.structuredContent !== undefined) out.structuredContent = replaceStrings(copy.structuredContent, everywhere, false) as Record<string, unknown>;
  return { result: out, located };
}

/**
 * Every occurrence of the redacted values replaced in one pass over a string: candidates by their
 * first PROPAGATE_MIN characters, the longest that matches at a position wins. A search per value
 * would cost values × text (1,000 spans on a 1 MiB result: seconds with the event loop blocked).
 */
function replacerOf(removed: ReadonlyMap<string, string>): (t: string) => string {
  if (removed.size === 0) return (t) => t;
  const byPrefix = new Map<string, [string, string][]>();
  for (const [value, placeholder] of removed) {
    const key = value.slice(0, PROPAGATE_MIN);
    const list = byPrefix.get(key);
    if (list) list.push([value, placeholder]);
    else byPrefix.set(key, [[value, placeholder]]);
  }
  for (const list of byPrefix.values()) list.sort((a, b) => b[0].length - a[0].length);
  return (t) => {
    let out = '';
    let pos = 0;
    for (let i = 0; i + PROPAGATE_MIN <= t.length; ) {
      const hit = byPrefix.get(t.slice(i, i + PROPAGATE_MIN))?.find(([v]) => t.startsWith(v, i));
      if (hit === undefined) {
        i++;
        continue;
      }
      out += t.slice(pos, i) + hit[1];
      i += hit[0].length;
      pos = i;
    }
    return pos === 0 ? t : out + t.slice(pos);
  };
}

/** A string inside the (copied) result at a JSON pointer, readable and writable; undefined when there is none or it is not text. */
function resolve(root: { content: unknown[]; structuredContent?: unknown }, pointer: string): { get(): string; set(v: string): void } | undefined {
  const segs = pointerSegments(pointer);
  if (segs[0] !== 'content' && segs[0] !== 'structuredContent') return undefined;
  let parent: unknown = root;
  for (let i = 0; i < segs.length - 1; i++) {
    const seg = segs[i]!;
    if (parent === null || typeof parent !== 'object' || !Object.hasOwn(parent, seg)) return undefined;
    parent = (parent as Record<string, unknown>)[seg];
  }
  const key = segs.at(-1)!;
  if (parent === null || typeof parent !== 'object' || !Object.hasOwn(parent, key)) return undefined;
  const holder = parent as Record<string, unknown>;
  if (typeof holder[key] !== 'string') return undefined;
  if (segs[0] === 'content' && segs.length <= 4 && NOT_TEXT.has(key)) return undefined; // a block's (or its resource's) base64 or type
  return { get: () => holder[key] as string, set: (v) => (holder[key] = v) };
}

function replaceStrings(v: unknown, f: (s: string) => string, inBlock: boolean): unknown {
  if (typeof v === 'string') return f(v);
  if (Array.isArray(v)) return v.map((x) => replaceStrings(x, f, false));
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = inBlock && NOT_TEXT.has(k) ? x : replaceStrings(x, f, inBlock && k === 'resource');
  return out;
}
