import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpTool, startGateway, type TestGateway } from '../helpers/app.js';
import { Upstream } from '../helpers/upstream.js';

// Red team: an upstream's error text reaches the model as surely as a result does (REST `details`,
// the MCP tool error's text), so the tool's result guards must read it too.

const RAW = fileURLToPath(new URL('../fixtures/mcp/result-guard-server.mjs', import.meta.url));
const AWS_KEY = 'AKIAQ3EGRTZ5LWXN4PKD';
const CARD = '4111 1111 1111 1111';

interface ErrBody { error: { code: string; message: string; modelMessage: string; details: Record<string, unknown>[] } }

describe('red team: result guards on error results', () => {
  let gw: TestGateway;
  const up = new Upstream();
  let status = 500;
  let ctype = 'text/plain';
  let body = '';

  beforeAll(async () => {
    await up.start();
    up.on((_req, res) => {
      res.writeHead(status, { 'content-type': ctype });
      res.end(body);
    });
    gw = await startGateway({
      tools: {
        'a.yaml': httpTool('rt.plain', `${up.url}/x`),
        'p.yaml': httpTool('rt.pii', `${up.url}/x`, { resultGuards: [{ pii: ['card'], action: 'redact' }] }),
        'r.yaml': httpTool('rt.strict', `${up.url}/x`, { resultGuards: [{ secrets: 'refuse' }] }),
        'raw.yaml': { kind: 'mcp-server', name: 'raw', transport: 'stdio', command: process.execPath, args: [RAW], prestart: true },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await up.close();
  });

  it('a 500 whose body echoes an AWS key: the key is redacted in details at the defaults, and audited as a finding', async () => {
    status = 500;
    ctype = 'text/plain';
    body = `internal error; config dump: aws_access_key_id=${AWS_KEY}`;
    const r = await gw.call('rt.plain', {});
    expect(r.statusCode).toBe(502);
    const e = (r.json() as ErrBody).error;
    expect(e.code).toBe('UPSTREAM_ERROR');
    expect(r.body).not.toContain(AWS_KEY);
    expect(JSON.stringify(e.details)).toContain('[REDACTED:secret]');
    const rec = (await gw.audit()).filter((a) => a.tool === 'rt.plain').at(-1);
    expect(JSON.stringify(rec)).not.toContain(AWS_KEY);
    expect(rec?.findings).toEqual([expect.objectContaining({ kind: 'secret', action: 'redact', count: 1 })]);
  });

  it('an invalid JSON answer echoed in details, and a 400 JSON body: redacted too', async () => {
    status = 200;
    ctype = 'application/json';
    body = `{"key": "${AWS_KEY}"`;
    expect((await gw.call('rt.plain', {})).body).not.toContain(AWS_KEY);
    status = 400;
    body = JSON.stringify({ message: `bad request for card ${CARD}` });
    const r = await gw.call('rt.pii', {});
    expect(r.statusCode).toBe(502);
    expect(r.body).not.toContain(CARD);
    expect(r.body).toContain('[REDACTED:card]');
  });

  it('secrets: refuse withholds the echoed body, keeps the error', async () => {
    status = 503;
    ctype = 'text/plain';
    body = `down, token ${AWS_KEY}`;
    const r = await gw.call('rt.strict', {});
    expect(r.statusCode).toBe(502);
    expect((r.json() as ErrBody).error.code).toBe('UPSTREAM_ERROR');
    expect(r.body).not.toContain(AWS_KEY);
    expect(r.body).toContain('[withheld by a result guard]');
  });

  it('an MCP tool error (isError: true) whose text carries a key: not shown on REST nor on /mcp', async () => {
    const result = { isError: true, content: [{ type: 'text', text: `failed: ${AWS_KEY}` }] };
    const r = await gw.call('raw.raw', { result });
    expect(r.statusCode).toBeGreaterThanOrEqual(400);
    expect(r.body).not.toContain(AWS_KEY);
    const init = await gw.app.inject({ method: 'POST', url: '/mcp', headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' }, payload: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } } });
    const sid = init.headers['mcp-session-id'] as string | undefined;
    const call = await gw.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': '2025-06-18', ...(sid ? { 'mcp-session-id': sid } : {}) },
      payload: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'raw.raw', arguments: { result } } },
    });
    expect(call.body).toContain('isError');
    expect(call.body).not.toContain(AWS_KEY);
  });
});
