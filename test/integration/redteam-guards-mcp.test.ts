import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/app.js';

// Red team: results of a real MCP server (it returns whatever result it is given) that try to get a
// secret or a card number past the result guards.

const RAW = fileURLToPath(new URL('../fixtures/mcp/result-guard-server.mjs', import.meta.url));
const KEY = 'AKIAQ3EGRTZ5LWXN4PKD';

interface Ok { result: { content: { type: string; text?: string; mimeType?: string }[]; structuredContent?: Record<string, unknown> } }

describe('red team: result guards on MCP results', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({
      tools: {
        'raw.yaml': { kind: 'mcp-server', name: 'raw', transport: 'stdio', command: process.execPath, args: [RAW], prestart: true, overrides: { other: { resultGuards: [{ pii: ['card'], action: 'redact' }] } } },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
  });
  const call = async (tool: string, result: unknown) => {
    const r = await gw.call(tool, { result });
    expect(r.statusCode).toBe(200);
    return r;
  };

  it.each([
    ['U+200E left-to-right mark', '\u200E'],
    ['U+200F right-to-left mark', '\u200F'],
    ['U+061C Arabic letter mark', '\u061C'],
    ['U+00AD soft hyphen', '\u00AD'],
    ['U+034F combining grapheme joiner', '\u034F'],
    ['U+180E Mongolian vowel separator', '\u180E'],
    ['U+3164 Hangul filler', '\u3164'],
  ])('a key split by an invisible %s is whole again and redacted at the defaults', async (_name, ch) => {
    const r = await call('raw.raw', { content: [{ type: 'text', text: `creds: ${KEY.slice(0, 8)}${ch}${KEY.slice(8)} ok` }] });
    expect((r.json() as Ok).result.content[0]?.text).toBe('creds: [REDACTED:secret] ok');
  });

  it('keys of structuredContent: invisible characters stripped, a card number as a key redacted', async () => {
    const r = await call('raw.other', { content: [{ type: 'text', text: 'ok' }], structuredContent: { ['note\u{E0049}\u{E0047}\u200B']: 1, '4111111111111111': 'x', '4111 1111 1111 1111': 'y' } });
    const sc = (r.json() as Ok).result.structuredContent ?? {};
    expect(Object.keys(sc)).toEqual(['note', '[REDACTED:card]', '[REDACTED:card]#2']);
    expect(r.body).not.toContain('4111');
  });

  it.each([
    ['no-break spaces (U+00A0)', '4111\u00A01111\u00A01111\u00A01111'],
    ['narrow no-break spaces (U+202F)', '4111\u202F1111\u202F1111\u202F1111'],
  ])('a card number grouped with %s is redacted', async (_what, card) => {
    const r = await call('raw.other', { content: [{ type: 'text', text: `paid with ${card}.` }] });
    expect((r.json() as Ok).result.content[0]?.text).toBe('paid with [REDACTED:card].');
  });

  it('a key written with JSON escapes in a text block (\\u0041KIA…, as a model decodes it) is redacted at the defaults', async () => {
    const escaped = `{"aws": "\\u0041\\u004B${KEY.slice(2)}", "note": "caf\\u00e9"}`;
    const r = await call('raw.raw', { content: [{ type: 'text', text: escaped }] });
    expect((r.json() as Ok).result.content[0]?.text).toBe('{"aws": "[REDACTED:secret]", "note": "caf\\u00e9"}');
  });

  it('a card number sent as a JSON number in structuredContent is redacted', async () => {
    const r = await call('raw.other', { content: [{ type: 'text', text: 'ok' }], structuredContent: { card: 4111111111111111, qty: 3, big: 1e308 } });
    expect((r.json() as Ok).result.structuredContent).toEqual({ card: '[REDACTED:card]', qty: 3, big: 1e308 });
  });
});

describe('red team: an MCP progress message of a long-running call', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({
      config: { calls: { progressIntervalMs: 50 } },
      tools: { 'raw.yaml': { kind: 'mcp-server', name: 'raw', transport: 'stdio', command: process.execPath, args: [RAW], prestart: true, overrides: { raw: { async: true } } } },
    });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('is guarded in the SSE events stream and in GET /v1/calls/{id}, and audited', async () => {
    const res = await gw.call('raw.raw', { progress: `step 1: using ${KEY}`, result: { content: [{ type: 'text', text: 'done' }] } });
    expect(res.statusCode).toBe(202);
    const { callId } = res.json() as { callId: string };
    const events = await gw.app.inject({ method: 'GET', url: `/v1/calls/${callId}/events` });
    expect(events.body).toContain('event: progress');
    expect(events.body).toContain('step 1: using [REDACTED:secret]');
    expect(events.body).not.toContain(KEY);
    const rec = await gw.app.inject({ method: 'GET', url: `/v1/calls/${callId}` });
    expect(rec.body).toContain('"status":"ok"');
    expect(rec.body).not.toContain(KEY);
    const audit = (await gw.audit()).filter((a) => a.callId === callId);
    expect(JSON.stringify(audit.map(({ args: _args, ...rest }) => rest))).not.toContain(KEY); // the args are the caller's own
    expect(audit.at(-1)?.findings).toEqual([expect.objectContaining({ kind: 'secret', action: 'redact', at: [expect.objectContaining({ path: '/progress/message' })] })]);
  });
});
