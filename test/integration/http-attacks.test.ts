import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { echoTool, startGateway, type TestGateway } from '../helpers/app.js';
import { until } from '../helpers/wait.js';

/**
 * Raw bytes over TCP that no HTTP client would send, against a listening gateway: what the
 * connection answers when the parser gives up, and methods Node never hands to a route.
 */

type Answer = { status: number; headers: Record<string, string>; body: string };

/** The answers read from a connection until it closes, in order. */
function answers(raw: string): Answer[] {
  const out: Answer[] = [];
  let rest = raw;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const [status = '', ...lines] = rest.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    const length = Number(headers['content-length'] ?? 0);
    out.push({ status: Number(status.slice(9, 12)), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}

const expectOneShape = (a: Answer | undefined, status: number, code: string) => {
  expect(a?.status).toBe(status);
  const body = JSON.parse(a?.body ?? '') as { error: Record<string, unknown> };
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error).toMatchObject({ code, retryable: false });
  expect(typeof body.error['message']).toBe('string');
  expect(typeof body.error['modelMessage']).toBe('string');
};

describe('raw HTTP attacks on a listening gateway', () => {
  let gw: TestGateway;
  let port: number;

  beforeAll(async () => {
    gw = await startGateway({
      tools: {
        'echo.yaml': echoTool('demo.echo'),
        'delay.yaml': { name: 'debug.delay', description: 'waits', sideEffect: 'write', backends: [{ id: 'b', builtin: 'delay' }] },
      },
    });
    port = Number(new URL(await gw.app.listen({ port: 0, host: '127.0.0.1' })).port);
  });
  afterAll(async () => gw?.close());

  /** Writes the chunks in order (waiting for `between` after the first), then reads until the connection closes. */
  function exchange(first: string, next?: { after: () => boolean; data: string }): Promise<{ raw: string; closed: boolean }> {
    return new Promise((resolve, reject) => {
      const s = connect(port, '127.0.0.1');
      let raw = '';
      let closed = false;
      s.setEncoding('latin1');
      s.on('data', (d: string) => (raw += d));
      s.on('error', () => undefined);
      s.setTimeout(4000, () => s.destroy());
      s.on('end', () => (closed = true));
      s.on('close', () => resolve({ raw, closed }));
      s.on('connect', () => {
        s.write(first);
        if (next) void until(next.after, 'the first request running').then(() => s.write(next.data), reject);
      });
    });
  }

  it('a malformed request pipelined after a valid call: the call\'s own answer comes first, then the 400, then the connection closes', async () => {
    const body = JSON.stringify({ arguments: { marker: 'pipelined' } });
    const call = `POST /v1/tools/demo.echo/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Request-Id: pipelined-call\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const { raw, closed } = await exchange(`${call}GET /v1/tools HTTP/1.1\r\nBad Header\r\n\r\n`);
    const [first, second, ...more] = answers(raw);
    // Before: the 400 was written at once and the connection cut, so it read as the call's answer (the call ran).
    expect(first?.status).toBe(200);
    expect(first?.headers['x-request-id']).toBe('pipelined-call');
    expect(JSON.parse(first?.body ?? '')).toMatchObject({ status: 'ok', result: { structuredContent: { marker: 'pipelined' } } });
    expectOneShape(second, 400, 'BAD_REQUEST');
    expect(more).toEqual([]);
    expect(closed).toBe(true);
  });

  it('a malformed request sent while a write call runs on the connection: the call\'s answer is not lost', async () => {
    const body = JSON.stringify({ arguments: { ms: 300 } });
    const call = `POST /v1/tools/debug.delay/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const { raw } = await exchange(call, { after: () => gw.app.gw.inFlight.count > 0, data: 'POST /v1/tools HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n' });
    const [first, second] = answers(raw);
    expect(first?.status).toBe(200);
    expect(JSON.parse(first?.body ?? '')).toMatchObject({ tool: 'debug.delay', status: 'ok' });
    expectOneShape(second, 400, 'BAD_REQUEST');
  });

  it('a request whose own body is malformed (a bad chunk size) is still answered at once', async () => {
    const started = Date.now();
    const { raw } = await exchange('POST /v1/tools/demo.echo/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n');
    const [only, ...more] = answers(raw);
    expectOneShape(only, 400, 'BAD_REQUEST');
    expect(more).toEqual([]);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('a Host that is not host[:port] (userinfo, path, query, backslash) or two Host lines is 400, not judged by its loopback part', async () => {
    // Before: Node kept the first Host line and the origin policy read these as 'localhost': 200.
    const refused = [
      'GET /v1/tools HTTP/1.1\r\nHost: evil.example@localhost\r\n\r\n',
      'GET /v1/tools HTTP/1.1\r\nHost: user@127.0.0.1\r\n\r\n',
      'GET /v1/tools HTTP/1.1\r\nHost: localhost/evil.example\r\n\r\n',
      'GET /v1/tools HTTP/1.1\r\nHost: localhost\\evil.example\r\n\r\n',
      'GET /v1/tools HTTP/1.1\r\nHost: localhost?evil.example\r\n\r\n',
      'GET /v1/tools HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n\r\n',
      'GET /v1/tools HTTP/1.1\r\nHost: localhost\r\nhost: localhost\r\n\r\n',
    ];
    for (const request of refused) {
      const { raw } = await exchange(request);
      const [only, ...more] = answers(raw);
      expectOneShape(only, 400, 'BAD_REQUEST');
      expect(only?.body).toContain('Host');
      expect(more).toEqual([]);
    }
    for (const host of ['localhost', 'LOCALHOST', `127.0.0.1:${port}`, `[::1]:${port}`, '127.0.0.1.']) {
      const { raw } = await exchange(`GET /v1/tools HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      expect(answers(raw)[0]?.status, host).toBe(200);
    }
  });

  it('the bodies a cross-site page can send without a preflight (text/plain, forms) reach no route: 400, nothing done', async () => {
    const before = gw.app.gw.registry.generation;
    for (const [type, body] of [['text/plain', '{"x":1}'], ['text/plain', ''], ['text/plain; charset=utf-8', 'a'], ['application/x-www-form-urlencoded', 'a=1'], ['multipart/form-data; boundary=b', '--b--\r\n']]) {
      for (const path of ['/admin/reload', '/v1/confirmations/cf_x/approve', '/v1/tools/demo.echo/call']) {
        const { raw } = await exchange(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body ?? '')}\r\nConnection: close\r\n\r\n${body}`);
        const [only] = answers(raw);
        expectOneShape(only, 400, 'BAD_REQUEST');
        expect(only?.body, `${path} ${type}`).toContain('must be JSON');
      }
    }
    // Before: a text/plain POST /admin/reload (it takes any body) reloaded tools.d: 200.
    expect(gw.app.gw.registry.generation).toBe(before);
  });

  it('POST /messages of a live legacy SSE session takes only JSON: a text/plain tools/call is 400 and does not run', async () => {
    const ac = new AbortController();
    const sse = await fetch(`http://127.0.0.1:${port}/sse`, { signal: ac.signal });
    const reader = (sse.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while (!/sessionId=[\w-]+/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
    const session = /sessionId=([\w-]+)/.exec(text)?.[1] ?? '';
    const post = (type: string, msg: unknown) => fetch(`http://127.0.0.1:${port}/messages?sessionId=${session}`, { method: 'POST', headers: { 'content-type': type }, body: JSON.stringify(msg) });
    try {
      const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
      expect((await post('application/json', init)).status).toBe(202);
      expect((await post('application/json', { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
      const calls = (await gw.audit()).length;
      for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded']) {
        const res = await post(type, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'demo__echo', arguments: { via: type } } });
        // Before: 202 and the call ran.
        expect(res.status, type).toBe(400);
        expect((await res.json()) as unknown).toMatchObject({ error: { code: 'BAD_REQUEST', retryable: false } });
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await gw.audit()).length).toBe(calls);
    } finally {
      ac.abort();
    }
  });

  it('CONNECT is answered 400 in the one shape (Node cut it with no answer)', async () => {
    for (const target of [`127.0.0.1:${port}`, 'evil.example:443']) {
      const { raw, closed } = await exchange(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
      const [only, ...more] = answers(raw);
      expectOneShape(only, 400, 'BAD_REQUEST');
      expect(only?.body).toContain('CONNECT');
      expect(more).toEqual([]);
      expect(closed).toBe(true);
    }
  });
});
