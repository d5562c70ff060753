import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpTool, startGateway, type TestGateway } from '../helpers/app.js';
import { Upstream } from '../helpers/upstream.js';

// Hostile results through the result guards: binary and invalid UTF-8, lone surrogates over MCP,
// 8 MiB, and strings built to make a pattern backtrack. No 500, no hang, every call audited.

const RAW = fileURLToPath(new URL('../fixtures/mcp/result-guard-server.mjs', import.meta.url));
const AWS_KEY = 'AKIAQ3EGRTZ5LWXN4PKD';
const MiB = 1024 * 1024;

describe('result guards on bad input', () => {
  let gw: TestGateway;
  const up = new Upstream();
  let body: Buffer = Buffer.alloc(0);

  beforeAll(async () => {
    await up.start();
    up.on((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(body);
    });
    const all = [{ secrets: 'redact' }, { pii: ['email', 'phone', 'card', 'iban', 'cn_id'], action: 'redact' }, { injection: 'flag' }, { invisible: 'strip' }, { links: { action: 'defang' } }];
    gw = await startGateway({
      tools: {
        'bin.yaml': httpTool('bad.bin', `${up.url}/b`, { resultGuards: all }),
        'big.yaml': { ...httpTool('bad.big', `${up.url}/b`, { resultGuards: all, result: { maxBytes: 65536 } }), backends: [{ id: 'up', http: { url: `${up.url}/b`, maxResponseBytes: 16 * MiB } }] },
        'raw.yaml': { kind: 'mcp-server', name: 'raw', transport: 'stdio', command: process.execPath, args: [RAW], prestart: true, resultGuards: all },
      },
    });
  });

  afterAll(async () => {
    await gw?.close();
    await up.close();
  });

  const call = async (tool: string, args: unknown = {}) => {
    const started = Date.now();
    const res = await gw.call(tool, args);
    return { status: res.statusCode, json: res.json<{ callId?: string; result?: { content: { text?: string }[] }; more?: { href: string; totalBytes: number }; error?: { code: string } }>(), ms: Date.now() - started };
  };
  const audited = async (tool: string, n: number) => expect((await gw.audit()).filter((r) => r['tool'] === tool && r['event'] === 'call').length).toBe(n);

  it('binary and invalid UTF-8 around a secret: a 200 with the secret gone, audited', async () => {
    body = Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1, 0xf0, 0x90, 0x28, 0xbc]), Buffer.from(` ${AWS_KEY} `), Buffer.from([0xed, 0xa0, 0x80, 0x00, 0xf8, 0x88, 0x80, 0x80, 0x80])]);
    const { status, json } = await call('bad.bin');
    expect(status).toBe(200);
    expect(JSON.stringify(json)).not.toContain(AWS_KEY);
    expect(json.result?.content[0]?.text).toContain('[REDACTED:secret]');
    await audited('bad.bin', 1);
  });

  it('lone surrogates and NULs in an MCP result do not break the guards or the response', async () => {
    const text = `\ud800${AWS_KEY}\udfff \u0000 mail bob@example.com \udbff\u200B`;
    const { status, json } = await call('raw.raw', { result: { content: [{ type: 'text', text }], structuredContent: { k: `\udc00${AWS_KEY}` } } });
    expect(status).toBe(200);
    expect(JSON.stringify(json)).not.toContain(AWS_KEY);
    expect(JSON.stringify(json)).not.toContain('bob@example.com');
  });

  it('an 8 MiB result is guarded whole (the secret at its very end is redacted) in bounded time', async () => {
    const line = 'GET /api/v1/items?page=2 200 14ms user-agent=curl/8.5.0 ok\n';
    body = Buffer.from(`${line.repeat(Math.ceil((8 * MiB) / line.length))}final ${AWS_KEY}\n`);
    const { status, json, ms } = await call('bad.big');
    expect(status).toBe(200);
    expect(ms).toBeLessThan(20_000);
    expect(json.more?.href).toBeDefined();
    // The paging store keeps a bounded prefix; the audit shows the guard read to the end.
    const record = (await gw.audit()).find((r) => r['callId'] === json.callId);
    const secret = (record?.['findings'] as { kind: string; action: string; at: { start: number }[] }[]).find((f) => f.kind === 'secret');
    expect(secret?.action).toBe('redact');
    expect(secret?.at[0]?.start).toBe(body.length - AWS_KEY.length - 1);
    expect(JSON.stringify(record)).not.toContain(AWS_KEY);
  }, 60_000);

  it.each([
    ['key prefixes', 'AKIA'.repeat(250_000)],
    ['an unterminated private-key block', `-----BEGIN RSA PRIVATE KEY-----\n${'MIIEow'.repeat(150_000)}`],
    ['at signs and dots', `${'a.'.repeat(200_000)}@${'b-'.repeat(200_000)}`],
    ['digits for card and phone patterns', '4111 '.repeat(200_000)],
    ['zero-width characters', '\u200B\u200C\u200D'.repeat(300_000)],
    ['markdown link openers', '[!['.repeat(150_000) + '](http://'.repeat(50_000)],
    ['instruction-like repetitions', 'ignore previous '.repeat(60_000)],
  ])('%s (about 1 MB) answer in bounded time, never a 500', async (_name, text) => {
    body = Buffer.from(text);
    const { status, ms } = await call('bad.bin');
    expect([200, 502]).toContain(status);
    expect(ms).toBeLessThan(10_000);
  }, 30_000);

  it('every call above left its audit record', async () => {
    await audited('bad.bin', 8);
    await audited('bad.big', 1);
  });
});
