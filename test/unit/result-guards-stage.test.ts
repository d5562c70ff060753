import { describe, expect, it } from 'vitest';
import { compileResultGuards, mergeResultGuards, resultGuardsOf } from '../../src/guards/result/compile.js';
import { guardResult, type ResultFinding } from '../../src/guards/result/stage.js';
import { applySpans } from '../../src/guards/result/webhook.js';
import { isGatewayError } from '../../src/errors.js';
import { DEFAULT_RESULT_GUARDS, type ResultGuardFile } from '../../src/tools/result-guards-schema.js';
import type { ToolResult } from '../../src/adapters/types.js';

const ctx = { tool: 't', callId: 'c_1', secrets: new Set<string>(), deadline: Date.now() + 10_000 };
const text = (t: string): ToolResult => ({ content: [{ type: 'text', text: t }], isError: false });

describe('merging result guards by kind', () => {
  it('defaults < file < tool; off removes a kind; other kinds pass through', () => {
    const file: ResultGuardFile[] = [{ pii: ['email'], action: 'redact' }, { injection: 'flag' }];
    const tool: ResultGuardFile[] = [{ injection: 'refuse' }, { secrets: 'off' }, { maxBlocks: 5 }];
    expect(mergeResultGuards(DEFAULT_RESULT_GUARDS, file, tool)).toEqual([{ invisible: 'strip' }, { pii: ['email'], action: 'redact' }, { injection: 'refuse' }, { maxBlocks: 5 }]);
    expect(mergeResultGuards(DEFAULT_RESULT_GUARDS, undefined, [{ pii: ['card'], action: 'off' }])).toEqual(DEFAULT_RESULT_GUARDS);
    expect(mergeResultGuards(DEFAULT_RESULT_GUARDS, [{ webhook: { url: 'http://127.0.0.1:1/x' } }], [{ webhook: 'off' }])).toEqual(DEFAULT_RESULT_GUARDS);
  });

  it('compiles a list once: the same list is the same object, another list another fingerprint', () => {
    const a = resultGuardsOf(DEFAULT_RESULT_GUARDS, undefined, undefined);
    expect(resultGuardsOf([{ secrets: 'redact' }], [{ invisible: 'strip' }], [])).toBe(a);
    const b = resultGuardsOf(DEFAULT_RESULT_GUARDS, undefined, [{ pii: ['email'], action: 'redact' }]);
    expect(b.fingerprint).not.toBe(a.fingerprint);
    expect(compileResultGuards([]).empty).toBe(true);
  });
});

describe('the result-guard stage', () => {
  it('a guard that throws fails closed with RESULT_REFUSED, not an internal error', async () => {
    const g = { ...compileResultGuards([{ secrets: 'redact' }]), text: [{ name: 'secrets' as const, scan: () => { throw new RangeError('boom'); } }], empty: false };
    const err = await guardResult(g, text('x'), ctx, []).catch((e: unknown) => e);
    expect(isGatewayError(err) && err.code).toBe('RESULT_REFUSED');
  });

  it('does not read base64 payloads or type tags as text, and reads resource text and nested strings', async () => {
    const g = compileResultGuards([{ pii: ['email'], action: 'redact' }]);
    const sink: ResultFinding[] = [];
    const result: ToolResult = {
      content: [
        { type: 'image', data: 'bob@example.com', mimeType: 'bob@example.com' },
        { type: 'resource', resource: { uri: 'file:///a', blob: 'bob@example.com' } },
        { type: 'resource', resource: { uri: 'file:///b', text: 'to bob@example.com' } },
      ],
      structuredContent: { list: [{ who: 'bob@example.com' }] },
      isError: false,
    };
    const out = await guardResult(g, result, ctx, sink);
    expect(out.content[0]).toEqual(result.content[0]);
    expect(out.content[1]).toEqual(result.content[1]);
    expect(out.content[2]).toEqual({ type: 'resource', resource: { uri: 'file:///b', text: 'to [REDACTED:email]' } });
    expect(out.structuredContent).toEqual({ list: [{ who: '[REDACTED:email]' }] });
    expect(sink[0]?.at.map((a) => a.path)).toEqual(['/content/2/resource/text', '/structuredContent/list/0/who']);
  });

  it('returns the same object when nothing is found (no copy per call)', async () => {
    const r = text('nothing to see');
    expect(await guardResult(compileResultGuards(DEFAULT_RESULT_GUARDS), r, ctx, [])).toBe(r);
  });
});

describe('webhook spans', () => {
  it('widens offsets to whole characters, merges overlaps, and refuses spans that do not fit', () => {
    const r = text('héllo wörld ok'); // é and ö are two bytes each
    const out = applySpans(r, [
      { block: 0, start: 2, end: 4 }, // inside é: widened
      { block: 0, start: 3, end: 6, kind: 'name' }, // overlaps the first
      { block: 0, start: 9, end: 10 },
    ]);
    expect(out?.result.content[0]?.['text']).toBe('h[REDACTED:webhook] w[REDACTED:webhook]rld ok');
    expect(applySpans(r, [{ block: 1, start: 0, end: 1 }])).toBeUndefined();
    expect(applySpans(r, [{ block: 0, start: 0, end: 999 }])).toBeUndefined();
    expect(applySpans(r, [{ block: 0, start: 3, end: 3 }])).toBeUndefined();
  });
});
