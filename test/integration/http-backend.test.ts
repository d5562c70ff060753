import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { Upstream, json } from '../helpers/upstream.js';
import { httpTool, startGateway, type TestGateway } from '../helpers/app.js';
import { until, untilAsync } from '../helpers/wait.js';

/** HTTP backends against a real upstream on 127.0.0.1: templating, statuses, aborts, caps. */
describe('HTTP backend', () => {
  let up: Upstream;
  let gw: TestGateway;
  const SECRET = 'sk-live-planted-secret-4242';

  beforeAll(async () => {
    up = await new Upstream().start();
    gw = await startGateway({
      env: { WEATHER_KEY: SECRET },
      tools: {
        'weather.yaml': {
          name: 'weather.current',
          description: 'Current weather for a city.',
          sideEffect: 'read',
          inputSchema: { type: 'object', required: ['city'], properties: { city: { type: 'string' }, units: { type: 'string' } } },
          result: { pick: ['/location', '/temp_c'], text: '{{location}}: {{temp_c}} °C' },
          backends: [
            {
              id: 'primary',
              http: {
                method: 'GET',
                url: `${up.url}/current?q={{city}}&units={{units}}`,
                headers: { Authorization: 'Bearer ${env:WEATHER_KEY}', 'X-City': '{{city}}' },
              },
            },
          ],
        },
        'post.yaml': {
          name: 'notes.create',
          description: 'Creates a note.',
          sideEffect: 'write',
          confirm: false,
          inputSchema: { type: 'object', properties: { title: { type: 'string' }, tags: { type: 'array' } } },
          backends: [{ id: 'api', http: { method: 'POST', url: `${up.url}/notes`, body: { note: { title: '{{title}}', tags: '{{tags}}' }, v: 1 } } }],
        },
        'raw.yaml': {
          name: 'notes.raw',
          description: 'Posts the raw arguments.',
          sideEffect: 'write',
          confirm: false,
          backends: [{ id: 'api', http: { method: 'POST', url: `${up.url}/raw`, body: '{{arguments}}' } }],
        },
        'slow.yaml': httpTool('slow.thing', `${up.url}/slow`, { timeoutMs: 300 }),
        'text.yaml': httpTool('text.thing', `${up.url}/text`),
        'status.yaml': {
          ...httpTool('status.thing', '', { inputSchema: { type: 'object', properties: { code: { type: 'integer' } } }, breaker: { failureThreshold: 100 } }),
          backends: [{ id: 'up', http: { url: `${up.url}/status/{{code}}`, headers: { authorization: 'Bearer ${env:WEATHER_KEY}' } } }],
        },
        'big.yaml': {
          ...httpTool('big.thing', `${up.url}/big`),
          backends: [{ id: 'up', http: { url: `${up.url}/big`, maxResponseBytes: 1000 } }],
        },
        'chunked.yaml': {
          ...httpTool('chunked.thing', `${up.url}/chunked`),
          backends: [{ id: 'up', http: { url: `${up.url}/chunked`, maxResponseBytes: 1000 } }],
        },
        'stall.yaml': httpTool('stall.thing', `${up.url}/stall-body`, { timeoutMs: 300 }),
        'cut.yaml': httpTool('cut.thing', `${up.url}/cut-body`, { breaker: { failureThreshold: 100 } }),
        'badjson.yaml': httpTool('badjson.thing', `${up.url}/badjson`),
        'long.yaml': httpTool('long.text', `${up.url}/long`, { result: { maxBytes: 100 } }),
        'shape.yaml': httpTool('shape.thing', `${up.url}/shape`, {
          outputSchema: { type: 'object', required: ['id'], properties: { id: { type: 'integer' } } },
        }),
        'refused.yaml': httpTool('refused.thing', 'http://127.0.0.1:9/nothing-listens-here'),
      },
    });
    up.on(async (req, res, body) => {
      const url = new URL(req.url ?? '/', up.url);
      if (url.pathname === '/current') return json(res, 200, { location: url.searchParams.get('q'), temp_c: 21, extra: 'dropped' });
      if (url.pathname === '/notes' || url.pathname === '/raw') return json(res, 201, { received: JSON.parse(body) as unknown });
      if (url.pathname === '/slow') return; // never answers: the gateway must give up and abort
      if (url.pathname === '/text') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        return void res.end('plain words');
      }
      if (url.pathname.startsWith('/status/')) {
        const code = Number(url.pathname.split('/')[2]);
        return json(res, code, { error: 'upstream says no', echo: req.headers.authorization ?? null });
      }
      if (url.pathname === '/big') return json(res, 200, { blob: 'x'.repeat(5000) });
      if (url.pathname === '/chunked') {
        // No Content-Length: the cap is enforced while the body streams in.
        res.writeHead(200, { 'content-type': 'text/plain' });
        for (let i = 0; i < 10; i++) res.write('y'.repeat(300));
        return void res.end();
      }
      if (url.pathname === '/cut-body') {
        // Headers promise 1,000 bytes; 10 arrive, then the connection is cut.
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.write('{"partial"');
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      if (url.pathname === '/stall-body') {
        // Headers and half the declared body, then nothing: the deadline must end the read.
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100' });
        return void res.write('z'.repeat(50));
      }
      if (url.pathname === '/badjson') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end('{not json');
      }
      if (url.pathname === '/long') {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        return void res.end('天气'.repeat(100));
      }
      if (url.pathname === '/shape') return json(res, 200, { id: 'not-a-number' });
      json(res, 404, {});
    });
  });

  afterAll(async () => {
    await gw.close();
    await up.close();
  });

  it('templates URL (encoded), headers and secrets from env, and picks the result', async () => {
    const res = await gw.call('weather.current', { city: 'New York & Co' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ tool: 'weather.current', status: 'ok', backend: 'primary', attempts: 1, fallback: null });
    expect(body.responseHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(body.result.structuredContent).toEqual({ location: 'New York & Co', temp_c: 21 });
    expect(body.result.content[0].text).toBe('New York & Co: 21 °C');
    const seen = up.seen.at(-1)!;
    expect(seen.url).toBe('/current?q=New%20York%20%26%20Co&units=');
    expect(seen.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(seen.headers['x-city']).toBe('New York & Co');
    expect(seen.headers['x-request-id']).toBe(res.headers['x-request-id']);
  });

  it('renders JSON body templates keeping value types, and {{arguments}} as the whole object', async () => {
    const res = await gw.call('notes.create', { title: 'hi', tags: ['a', 'b'] });
    expect(res.statusCode).toBe(200);
    expect(res.json().result.structuredContent).toEqual({ received: { note: { title: 'hi', tags: ['a', 'b'] }, v: 1 } });
    const raw = await gw.call('notes.raw', { any: { nested: [1, 2] } });
    expect(raw.json().result.structuredContent).toEqual({ received: { any: { nested: [1, 2] } } });
    expect(up.seen.at(-1)!.headers['content-type']).toBe('application/json');
  });

  it('passes text responses through', async () => {
    const res = await gw.call('text.thing', {});
    expect(res.statusCode).toBe(200);
    expect(res.json().result).toEqual({ content: [{ type: 'text', text: 'plain words' }], isError: false });
  });

  it.each([404, 400, 500, 503, 429])('maps upstream status %i to UPSTREAM_ERROR 502 with status and trimmed body', async (code) => {
    const res = await gw.call('status.thing', { code });
    expect(res.statusCode).toBe(502);
    const err = res.json().error;
    expect(err.code).toBe('UPSTREAM_ERROR');
    expect(err.details[0]).toMatchObject({ status: code });
    expect(err.details[0].body).toContain('upstream says no');
    expect(typeof err.modelMessage).toBe('string');
  });

  it('never hands a secret echoed by the upstream back to the caller', async () => {
    const res = await gw.call('status.thing', { code: 500 });
    expect(res.body).not.toContain(SECRET); // the upstream echoed the Authorization header
    expect(res.body).toContain('[REDACTED]');
  });

  it('aborts a slow upstream when the tool timeout passes: 504 TIMEOUT and the upstream sees the abort', async () => {
    const aborted = up.nextAbort();
    const started = Date.now();
    const res = await gw.call('slow.thing', {});
    expect(res.statusCode).toBe(504);
    expect(res.json().error).toMatchObject({ code: 'TIMEOUT', retryable: true });
    await aborted;
    expect(up.seen.filter((s) => s.url === '/slow').every((s) => s.aborted)).toBe(true);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('a client that hangs up mid-call cancels the upstream request; the call is audited as an error', async () => {
    const slow = httpTool('slow.thing', `${up.url}/slow`, { timeoutMs: 20_000 });
    const listening = await startGateway({ tools: { 'slow.yaml': slow } });
    const address = await listening.app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const aborted = up.nextAbort();
      const before = up.seen.filter((s) => s.url === '/slow').length;
      const body = JSON.stringify({ arguments: {} });
      const socket = connect(Number(new URL(address).port), '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write(`POST /v1/tools/slow.thing/call HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
      await until(() => up.seen.filter((s) => s.url === '/slow').length > before, 'the upstream to get the call');
      const started = Date.now();
      socket.destroy();
      await aborted; // long before the tool's 20 s timeout
      expect(Date.now() - started).toBeLessThan(5000);
      await untilAsync(async () => (await listening.audit()).some((r) => r['tool'] === 'slow.thing'), 'the audit record');
      const record = (await listening.audit()).find((r) => r['tool'] === 'slow.thing');
      expect(record).toMatchObject({ outcome: 'error', errorCode: 'UNAVAILABLE', backend: 'up' });
    } finally {
      await listening.close();
    }
  });

  it('refuses a response over the size cap', async () => {
    const res = await gw.call('big.thing', {});
    expect(res.statusCode).toBe(502);
    expect(res.json().error.message).toContain('larger than 1000 bytes');
  });

  it('refuses a streamed (chunked) response once it passes the cap, and times out a body that stalls', async () => {
    const big = await gw.call('chunked.thing', {});
    expect(big.statusCode).toBe(502);
    expect(big.json().error.message).toContain('larger than 1000 bytes');
    const started = Date.now();
    const stalled = await gw.call('stall.thing', {});
    expect(stalled.statusCode).toBe(504);
    expect(stalled.json().error.code).toBe('TIMEOUT');
    expect(Date.now() - started).toBeLessThan(3000);
    await until(() => up.seen.filter((s) => s.url === '/stall-body').every((s) => s.aborted), 'the stalled response to be abandoned');
  });

  it('a connection cut in the middle of the body is an upstream error (502), not a hang or a 500', async () => {
    const res = await gw.call('cut.thing', {});
    expect(res.statusCode).toBe(502);
    expect(res.json().error.code).toBe('UPSTREAM_ERROR');
    expect(res.json().error.message).toMatch(/could not be reached/);
  });

  it('reports invalid JSON from the upstream as UPSTREAM_ERROR', async () => {
    const res = await gw.call('badjson.thing', {});
    expect(res.statusCode).toBe(502);
    expect(res.json().error.message).toContain('invalid JSON');
  });

  it('caps the result at result.maxBytes with a visible marker, without cutting a character', async () => {
    const res = await gw.call('long.text', {});
    const text: string = res.json().result.content[0].text;
    expect(text).toMatch(/\[truncated: \d+ of 600 bytes shown\]$/);
    expect(text).not.toContain('\uFFFD');
    expect(Buffer.byteLength(text.split('\n')[0]!)).toBeLessThanOrEqual(100);
  });

  it('checks the response against outputSchema', async () => {
    const res = await gw.call('shape.thing', {});
    expect(res.statusCode).toBe(502);
    expect(res.json().error.details[0]).toMatchObject({ path: '/id' });
  });

  it('answers UNAVAILABLE 503 when nothing listens at the backend', async () => {
    const res = await gw.call('refused.thing', {});
    expect(res.statusCode).toBe(503);
    expect(res.json().error.code).toBe('UNAVAILABLE');
  });

  it('keeps the secret out of the audit log and records each call', async () => {
    const records = await gw.audit();
    const calls = records.filter((r) => r.event === 'call');
    expect(calls.length).toBeGreaterThanOrEqual(10);
    expect(readFileSync(gw.auditFile, 'utf8')).not.toContain(SECRET);
    const ok = calls.find((r) => r.tool === 'weather.current')!;
    expect(ok).toMatchObject({ outcome: 'ok', backend: 'primary', attempts: 1, caller: 'local' });
    expect(ok.responseHash).toMatch(/^sha256:/);
    expect(calls.find((r) => r.tool === 'slow.thing')).toMatchObject({ outcome: 'error', errorCode: 'TIMEOUT' });
  });
});
