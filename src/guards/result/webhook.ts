import { Agent, request } from 'undici';
import type { ToolResult } from '../../adapters/types.js';
import { createAjv } from '../../util/ajv.js';
import type { CompiledWebhook } from './compile.js';

/**
 * The external guard service (`resultGuards: [{ webhook: { url, timeoutMs, failOpen } }]`).
 * Request: `POST url`, `content-type: application/json`, body `{ tool, callId, result }` (the
 * result after the built-in guards: already redacted). Answer: a 2xx JSON body, at most
 * MAX_ANSWER_BYTES, one of `{ action: "allow" }`, `{ action: "redact", spans: [{ block, start,
 * end, kind? }] }` (UTF-8 byte offsets [start, end) in the text of content block `block`),
 * `{ action: "refuse", reason? }`. Anything else (another status, a redirect, garbage, too big,
 * too slow) is a failure: `failOpen` decides.
 */

export const MAX_ANSWER_BYTES = 64 * 1024;
const MAX_SPANS = 1000;

export interface WebhookSpan {
  readonly block: number;
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
            required: ['block', 'start', 'end'],
            additionalProperties: false,
            properties: {
              block: { type: 'integer', minimum: 0 },
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

/**
 * The result with each span replaced by `[REDACTED:<kind>]` (kind default `webhook`); offsets are
 * widened to whole characters. The structuredContent goes too when anything was redacted: the
 * spans cannot address it and it usually repeats the text. Undefined when a span does not fit.
 */
export function applySpans(
  result: ToolResult,
  spans: readonly WebhookSpan[],
): { result: ToolResult; located: { path: string; start: number; end: number }[] } | undefined {
  if (spans.length === 0) return { result, located: [] };
  const byBlock = new Map<number, WebhookSpan[]>();
  for (const s of spans) {
    const block = result.content[s.block];
    if (!block || block.type !== 'text' || typeof block['text'] !== 'string' || s.start >= s.end) return undefined;
    const list = byBlock.get(s.block);
    if (list) list.push(s);
    else byBlock.set(s.block, [s]);
  }
  const located: { path: string; start: number; end: number }[] = [];
  const content = [...result.content];
  for (const [i, list] of byBlock) {
    const block = content[i]!;
    const buf = Buffer.from(block['text'] as string, 'utf8');
    if (list.some((s) => s.end > buf.length)) return undefined;
    // Whole characters, then overlapping spans merged into one placeholder (the first one's kind).
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
    for (const r of ranges) located.push({ path: `/content/${i}/text`, start: r.from.start, end: r.from.end });
    const parts: Buffer[] = [];
    let pos = 0;
    for (const r of merged) {
      parts.push(buf.subarray(pos, r.start), Buffer.from(`[REDACTED:${r.kind ?? 'webhook'}]`));
      pos = r.end;
    }
    parts.push(buf.subarray(pos));
    content[i] = { ...block, text: Buffer.concat(parts).toString('utf8') };
  }
  return { result: { content, isError: result.isError }, located };
}
