import { GatewayError } from '../../errors.js';
import type { ContentBlock, ToolResult } from '../../adapters/types.js';
import type { CompiledResultGuards } from './compile.js';
import type { FindingAction, FindingKind } from './types.js';
import { askWebhook, applySpans } from './webhook.js';
import { toPointer } from '../../util/source.js';

/**
 * Stage: a normalized result through the tool's result guards, before the cap, the cache, paging
 * and the audit see it (so none of them ever holds what a guard removed). Order: `maxBlocks`, the
 * text guards over every string a model will read, then the webhook on the redacted result.
 */

/** One kind and action in one call's result, as the audit record writes it: never the matched text. */
export interface ResultFinding {
  readonly kind: FindingKind;
  readonly action: FindingAction;
  count: number;
  /** Where (JSON pointer into the result) and the UTF-8 byte offsets in that string as the guard got it; at most MAX_LOCATED. */
  readonly at: { readonly path: string; readonly start: number; readonly end: number }[];
  /** Why, when it is not a match (a webhook that failed open). */
  note?: string;
}

export const MAX_LOCATED = 16;

export interface StageContext {
  readonly tool: string;
  readonly callId: string;
  readonly secrets: ReadonlySet<string>;
  /** Epoch ms by which the call must end: the webhook gets what is left (at most its timeoutMs). */
  readonly deadline: number;
  readonly signal?: AbortSignal | undefined;
  /** Told when a guard itself fails (a bug, not input): the result is withheld, the operator should know. */
  readonly onGuardError?: ((err: unknown) => void) | undefined;
}

/** Keys whose strings a model does not read as text: base64 payloads (image, audio, blob) and type tags. */
const NOT_TEXT = new Set(['type', 'mimeType', 'data', 'blob']);

class Findings {
  readonly list: ResultFinding[] = [];
  add(kind: FindingKind, action: FindingAction, count: number, path: string, offsets: readonly (readonly [number, number])[], note?: string): void {
    let f = this.list.find((x) => x.kind === kind && x.action === action);
    if (!f) this.list.push((f = { kind, action, count: 0, at: [] }));
    f.count += count;
    for (const [start, end] of offsets) if (f.at.length < MAX_LOCATED) f.at.push({ path, start, end });
    if (note !== undefined) f.note = note;
  }
  get refused(): boolean {
    return this.list.some((f) => f.action === 'refuse');
  }
}

/** Thrown by the walk at the first refusal: nothing more needs reading. */
class Refused {}

/**
 * The guarded result and what was found. Throws RESULT_REFUSED (never retried, never a fallback)
 * when a guard refuses; `sink` gets the findings either way (the audit writes them).
 */
export async function guardResult(g: CompiledResultGuards, result: ToolResult, ctx: StageContext, sink: ResultFinding[]): Promise<ToolResult> {
  if (g.empty) return result;
  const found = new Findings();
  try {
    let out = result;
    if (g.maxBlocks && result.content.length > g.maxBlocks.max) out = limitBlocks(out, g.maxBlocks, found);
    if (g.text.length > 0) out = scanStrings(g, out, ctx, found);
    if (g.webhook) out = await webhookStage(g.webhook, out, ctx, found);
    return out;
  } catch (e) {
    if (e instanceof Refused) throw refusal(found.list, ctx);
    // A guard that breaks on a result fails closed: an unchecked result is not shown.
    ctx.onGuardError?.(e);
    throw new GatewayError('RESULT_REFUSED', `a result guard of '${ctx.tool}' failed on its result (${e instanceof Error ? e.name : 'error'}); the upstream did run`, {
      modelMessage: 'The tool ran, but the gateway withheld its result because it could not be checked. Do not call the tool again with the same arguments; tell the user.',
      details: [{ message: 'the upstream ran; its result was withheld', upstreamRan: true, kinds: [] }],
      cause: e,
    });
  } finally {
    sink.push(...found.list);
  }
}

function limitBlocks(result: ToolResult, limit: NonNullable<CompiledResultGuards['maxBlocks']>, found: Findings): ToolResult {
  const over = result.content.length - limit.max;
  found.add('blocks', limit.action, over, '/content', []);
  if (limit.action === 'refuse') throw new Refused();
  const marker = { type: 'text', text: `[truncated: ${limit.max} of ${result.content.length} content blocks shown (result guard maxBlocks)]` };
  return { ...result, content: [...result.content.slice(0, limit.max), marker] };
}

function scanStrings(g: CompiledResultGuards, result: ToolResult, ctx: StageContext, found: Findings): ToolResult {
  const strings: string[] = [];
  for (const block of result.content) collect(block, strings, true);
  if (result.structuredContent !== undefined) collect(result.structuredContent, strings, false);
  if (strings.length === 0) return result;
  // The common case, a clean result, in one pass per guard over its strings joined by line feeds
  // (one call per guard, not one per string); anything found, and the strings are read one by one.
  // Sound while every detector is local: a match in one string is still one with a line feed
  // either side (its context checks treat a line feed as they treat the start or end of a text).
  if (strings.length > 1 && clean(g, strings.join('\n'), ctx)) return result;
  const path: (string | number)[] = [];
  const at = () => toPointer(path);
  const scan = (text: string): string => {
    let t = text;
    for (const guard of g.text) {
      const r = guard.scan(t, { secrets: ctx.secrets });
      if (r.findings.length > 0) {
        const where = at();
        for (const f of r.findings) found.add(f.kind, f.action, f.count, where, f.offsets);
        if (found.refused) throw new Refused();
      }
      t = r.text;
    }
    return t;
  };
  let changed = false;
  path.push('content', 0);
  const content = result.content.map((block, i) => {
    path[1] = i;
    const next = walk(block, path, scan, true) as ContentBlock;
    if (next !== block) changed = true;
    return next;
  });
  path.length = 0;
  path.push('structuredContent');
  const structured = result.structuredContent === undefined ? undefined : (walk(result.structuredContent, path, scan, false) as Record<string, unknown>);
  if (!changed && structured === result.structuredContent) return result;
  const out: ToolResult = { content: changed ? content : result.content, isError: result.isError };
  if (structured !== undefined) out.structuredContent = structured;
  return out;
}

function clean(g: CompiledResultGuards, text: string, ctx: StageContext): boolean {
  for (const guard of g.text) {
    const r = guard.scan(text, { secrets: ctx.secrets });
    if (r.findings.length > 0 || r.text !== text) return false;
  }
  return true;
}

/** The strings `walk` would read, in its order (`inBlock`: a content block, or a resource in one). Depth is bounded by normalize (limits.maxResultDepth). */
function collect(v: unknown, out: string[], inBlock: boolean): void {
  if (typeof v === 'string') out.push(v);
  else if (typeof v === 'number') {
    if (digitRun(v)) out.push(String(v));
  } else if (Array.isArray(v)) for (const x of v) collect(x, out, false);
  else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (inBlock && NOT_TEXT.has(k)) continue;
      if (!inBlock) out.push(k);
      collect(x, out, inBlock && k === 'resource');
    }
  }
}

/** A JSON number a model reads as a digit run (a card or phone number sent as a number): scanned as its text. */
function digitRun(n: number): boolean {
  return Number.isSafeInteger(n) && Math.abs(n) >= 10_000_000;
}

/** Every string under `v`, rewritten by `scan`; the same object where nothing changed. `path` is the pointer's segments, kept as a stack. */
function walk(v: unknown, path: (string | number)[], scan: (s: string) => string, inBlock: boolean): unknown {
  if (typeof v === 'string') return scan(v);
  if (typeof v === 'number') {
    if (!digitRun(v)) return v;
    const text = String(v);
    const next = scan(text);
    return next === text ? v : next; // redacted: a string now (safety over shape)
  }
  if (Array.isArray(v)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      path.push(i);
      const next = walk(v[i], path, scan, false);
      path.pop();
      if (next !== v[i]) (copy ??= [...v])[i] = next;
    }
    return copy ?? v;
  }
  if (v === null || typeof v !== 'object') return v;
  let copy: Record<string, unknown> | undefined;
  let renamed: [string, string][] | undefined;
  for (const [k, x] of Object.entries(v)) {
    if (inBlock && NOT_TEXT.has(k)) continue;
    path.push(k);
    // Keys of structured data reach the model as much as values do (content blocks' keys are the protocol's).
    const key = inBlock ? k : scan(k);
    // A resource block's own object: its `blob` is base64 too.
    const next = walk(x, path, scan, inBlock && k === 'resource');
    path.pop();
    if (key !== k) (renamed ??= []).push([k, key]);
    if (next !== x) (copy ??= { ...(v as Record<string, unknown>) })[k] = next;
  }
  if (renamed === undefined) return copy ?? v;
  const src = copy ?? (v as Record<string, unknown>);
  const names = new Map(renamed);
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(src)) {
    let key = names.get(k) ?? k;
    // Two keys redacted alike stay two keys.
    for (let n = 2; Object.prototype.hasOwnProperty.call(out, key); n++) key = `${names.get(k) ?? k}#${n}`;
    out[key] = x;
  }
  return out;
}


async function webhookStage(hook: NonNullable<CompiledResultGuards['webhook']>, result: ToolResult, ctx: StageContext, found: Findings): Promise<ToolResult> {
  const verdict = await askWebhook(hook, { tool: ctx.tool, callId: ctx.callId, result }, ctx);
  const failed = (reason: string): ToolResult => {
    const note = `the webhook failed (${reason})`;
    if (hook.failOpen) {
      found.add('webhook', 'flag', 1, '', [], `${note}; allowed (failOpen)`);
      return result;
    }
    found.add('webhook', 'refuse', 1, '', [], `${note}; refused (failOpen: false)`);
    throw new Refused();
  };
  if (verdict.action === 'allow') return result;
  if (verdict.action === 'failed') return failed(verdict.reason);
  if (verdict.action === 'refuse') {
    found.add('webhook', 'refuse', 1, '', [], `the webhook refused: ${verdict.reason}`);
    throw new Refused();
  }
  const applied = applySpans(result, verdict.spans);
  if (applied === undefined) return failed('its spans do not fit the result'); // a webhook we cannot follow is a failed one
  for (const s of applied.located) found.add('webhook', 'redact', 1, s.path, [[s.start, s.end]]);
  return applied.result;
}

function refusal(findings: readonly ResultFinding[], ctx: StageContext): GatewayError {
  const refused = findings.filter((f) => f.action === 'refuse');
  const kinds = [...new Set(refused.map((f) => f.kind))];
  const what = kinds.map((k) => KIND_WORDS[k]).join(', ');
  const note = refused.find((f) => f.note !== undefined)?.note;
  return new GatewayError('RESULT_REFUSED', `the result of '${ctx.tool}' was withheld by its result guards (${kinds.join(', ')}); the upstream did run`, {
    modelMessage: `The tool ran, but the gateway withheld its result: a result guard found ${what} in it. The result is not shown. Do not call the tool again with the same arguments; tell the user.`,
    details: [{ message: 'the upstream ran; its result was withheld', upstreamRan: true, kinds, ...(note !== undefined ? { reason: note.slice(0, 200) } : {}) }],
  });
}

const KIND_WORDS: Readonly<Record<FindingKind, string>> = {
  secret: 'a secret (a credential)',
  email: 'an e-mail address',
  phone: 'a phone number',
  card: 'a payment card number',
  iban: 'a bank account number (IBAN)',
  cn_id: 'a resident ID number',
  injection: 'instructions aimed at the model (prompt injection)',
  invisible: 'invisible characters',
  link: 'a link to a host not allowed',
  blocks: 'more content blocks than allowed',
  webhook: 'something the external guard service refused',
};
