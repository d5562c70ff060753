import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { Ajv } from 'ajv';
import type { LightMyRequestResponse } from 'fastify';
import { echoTool, startGateway, type TestGateway } from '../helpers/app.js';
import { seededRng } from '../helpers/rng.js';
import { until } from '../helpers/wait.js';
import { ERROR_CATALOGUE, type ErrorCode } from '../../src/errors.js';
import { ErrorBody } from '../../src/routes/schemas.js';

/**
 * Every route of the OpenAPI document (and /mcp, /sse, /messages, the console, unknown paths) fed
 * bounded malformed input: never a 500, every error in the one SPEC §3 shape with a catalogue code
 * and its status, no stack trace. Seeded: a failure names its case and reproduces.
 */
const SEED = 0x7001_9a7e;
const ADMIN = 'fuzz-admin-key-000000001';
const AGENT = 'fuzz-agent-key-000000002';
const BODY_LIMIT = 65_536;
/** The longest tool name the tool schema allows (128 characters). */
const LONG_NAME = `long.${'n'.repeat(123)}`;

const ajv = new Ajv({ strict: false, allErrors: true });
// The one shape, strictly: nothing beside `error`, nothing in it beside the five fields.
const strictErrorBody = {
  ...ErrorBody,
  additionalProperties: false,
  required: ['error'],
  properties: { error: { ...ErrorBody.properties.error, additionalProperties: false } },
};
const validErrorBody = ajv.compile(strictErrorBody);
/** The Streamable HTTP transport's own HTTP errors on /mcp: a JSON-RPC error response without an id. */
const validJsonRpcError = ajv.compile({
  type: 'object',
  required: ['jsonrpc', 'error', 'id'],
  additionalProperties: false,
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: 'null' },
    error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} } },
  },
});

/** A stack frame, a source or dependency path of this checkout, Node's internals. */
const LEAKS = [/\n\s+at /, /\bat \S+ \(\S+:\d+:\d+\)/, new RegExp(process.cwd().replace(/[/.]/g, '\\$&')), /node_modules/, /node:internal/, /\.ts:\d+:\d+/, /\.js:\d+:\d+/];

interface Case {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
}

type Rng = () => number;
const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;

const nested = (depth: number, open: string, close: string, leaf = '1') => open.repeat(depth) + leaf + close.repeat(depth);

/** Path parameter values as sent on the wire (already percent-encoded where meant to be). */
const BAD_PARAMS = [
  '%zz', '%E0%A4%A', '%', 'a%2Fb', '..%2F..%2Fetc%2Fpasswd', '%2e%2e', '..', '.', '%00', 'x%00y', '%C0%AF', '%FF',
  'a'.repeat(200), 'a'.repeat(300), 'a'.repeat(1100), encodeURIComponent('工具😀'), encodeURIComponent('\u202e\u200b'),
  '__proto__', 'constructor', 'prototype', encodeURIComponent("' OR 1=1 --"), '%20', '~', 'a;b', encodeURIComponent('a\\b'), 'a%5Cb',
  encodeURIComponent('{{id}}'), '-1', '1e309', 'null', 'undefined',
];

const BAD_QUERIES = [
  '', 'format=openai', 'format=openai&format=mcp', 'format[]=x', 'format=__proto__', 'limit=-1', 'limit=0', 'limit=1e309',
  'limit=99999999999999999999999', 'limit=abc', 'limit=1&limit=2', 'limit[]=1', 'offset=-5', 'offset=1.5', 'offset=NaN',
  'since=notadate', `since=${'9'.repeat(400)}`, 'until=-1', 'cursor=%zz', `cursor=${'x'.repeat(3000)}`, 'status=__proto__',
  'status=pending&status=done', '__proto__[x]=1', 'constructor[prototype][x]=1', `tool=${encodeURIComponent('工具')}`,
  `sessionId=${'a'.repeat(300)}`, 'a=%00', '&&&=', '=', 'outcome=%FF', 'event[]=a&event[]=b', 'caller=%25zz',
];

const deepArgs = (n: number) => `{"arguments":${nested(n, '{"a":', '}')}}`;
const BODIES: readonly (string | undefined)[] = [
  undefined, '', '{bad', '{"a":', 'null', '[]', '123', '-0', '"str"', 'true', '{}', '\u0000', '{"a":"\u0000"}',
  nested(1000, '[', ']'), nested(1000, '{"a":', '}'), deepArgs(1000), deepArgs(6000), nested(6000, '[', ']'),
  `{"arguments":{"message":"${'x'.repeat(BODY_LIMIT - 40)}"}}`, `{"arguments":{"message":"${'x'.repeat(BODY_LIMIT + 10)}"}}`,
  '{"arguments":{"message":"\\u0000\\ud800\\uffff😀\u202e"}}', '{"arguments":{"\\u0000":1,"":2}}',
  '{"__proto__":{"polluted":1}}', '{"arguments":{"__proto__":{"polluted":1}}}', '{"constructor":{"prototype":{"polluted":1}}}',
  '{"arguments":{"constructor":{"prototype":{"x":1}}}}', '{"arguments":[]}', '{"arguments":"x"}', '{"arguments":null}',
  '{"arguments":{"ms":-1}}', '{"arguments":{"ms":1e309}}', '{"arguments":{"ms":"5"}}', '{"arguments":{},"sessionId":123}',
  `{"arguments":{},"sessionId":"${'a'.repeat(300)}"}`, '{"arguments":{},"extra":1}', '{"query":123}', '{"query":"x","k":-1}',
  '{"query":"x","k":1e9}', `{"query":"${'q '.repeat(20000)}"}`, '{"query":"weather","format":"__proto__","explain":"yes"}',
  '{"tool_calls":"x"}', '{"tool_calls":[null]}', '{"tool_calls":[{"function":{"name":"debug.echo","arguments":"{bad"}}]}',
  '{"content":[{"type":"tool_use"}]}', '{"calls":[{"tool":123}]}', `{"calls":[${Array(300).fill('{"tool":"debug.echo","arguments":{}}').join(',')}]}`,
  '{"calls":[{"tool":"debug.echo","arguments":{"__proto__":{"x":1}}}]}', '{"note":123}', `{"note":"${'x'.repeat(10_000)}"}`,
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"debug.echo","arguments":{}}}',
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}',
  '{"jsonrpc":"2.0","method":"initialize"}', '[{"jsonrpc":"2.0"}]', `[${Array(200).fill('{"jsonrpc":"2.0","method":"ping","id":1}').join(',')}]`, '{"jsonrpc":"1.0"}',
];

const CONTENT_TYPES = [
  'application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x', 'application/xml', 'application/json; charset=utf-16', '*/*', 'application/jsonx', ';;;', 'APPLICATION/JSON',
];

const GARBAGE_HEADERS: readonly [string, string][] = [
  ['authorization', 'Bearer'], ['authorization', 'Bearer '], ['authorization', 'Basic Zm9vOmJhcg=='], ['authorization', `Bearer ${'x'.repeat(5000)}`],
  ['authorization', 'Bearer 工具'], ['authorization', `bearer ${ADMIN}`], ['authorization', `Bearer ${ADMIN} extra`], ['authorization', `Bearer  ${AGENT}`],
  ['idempotency-key', 'x'.repeat(10_000)], ['idempotency-key', '工具😀'], ['idempotency-key', ''], ['idempotency-key', ' \t '], ['idempotency-key', '\u0000'],
  ['prefer', 'respond-async'], ['prefer', 'wait=abc'], ['prefer', 'respond-async, wait=-1'], ['prefer', 'wait=99999999999999999999'], ['prefer', ';;;='],
  ['prefer', 'x'.repeat(5000)], ['traceparent', 'garbage'], ['traceparent', `00-${'0'.repeat(32)}-${'0'.repeat(16)}-01`], ['traceparent', '00-zz-zz-zz'],
  ['traceparent', `ff-${'a'.repeat(32)}-${'b'.repeat(16)}-01`], ['tracestate', '='.repeat(600)], ['x-request-id', 'x'.repeat(500)], ['x-request-id', '../../工具'],
  ['accept', 'text/event-stream'], ['accept', 'application/json, text/event-stream'], ['accept', 'garbage/*;q=x'], ['mcp-session-id', 'garbage'],
  ['mcp-session-id', 'x'.repeat(1000)], ['mcp-protocol-version', 'garbage'], ['mcp-protocol-version', '2099-01-01'], ['last-event-id', '%zz'],
  ['origin', 'http://evil.example'], ['origin', 'null'], ['sec-fetch-site', 'cross-site'], ['content-encoding', 'br'], ['x-forwarded-for', '工具'],
];

interface Route {
  method: string;
  path: string;
}

/** Every method and path of the OpenAPI document, HEAD beside each GET, and the routes it hides. */
function routes(): Route[] {
  const doc = JSON.parse(readFileSync('openapi/openapi.json', 'utf8')) as { paths: Record<string, Record<string, unknown>> };
  const out: Route[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const m of Object.keys(ops)) {
      out.push({ method: m.toUpperCase(), path });
      if (m === 'get') out.push({ method: 'HEAD', path });
    }
    out.push({ method: pick(seededRng(path.length), ['PUT', 'PATCH', 'OPTIONS']), path });
  }
  for (const path of ['/mcp', '/sse', '/messages']) if (!doc.paths[path]) throw new Error(`${path} is missing from the OpenAPI document`);
  for (const [method, path] of [['GET', '/console'], ['GET', '/docs'], ['GET', '/openapi.json'], ['GET', '/nope'], ['POST', '/v1/nope/{name}'], ['DELETE', '/v1'], ['GET', '/v1/tools/{name}/call/extra']] as const) {
    out.push({ method, path });
  }
  return out;
}

interface Valid {
  name: string;
  callId: string;
  confirmationId: string;
}

function fillPath(path: string, rng: Rng, valid: Valid, bad: boolean): string {
  return path.replace(/\{(\w+)\}/g, (_, p: string) => {
    if (bad) return pick(rng, BAD_PARAMS);
    if (p === 'name') return encodeURIComponent(valid.name);
    if (p === 'callId') return valid.callId;
    if (p === 'id') return pick(rng, [valid.confirmationId, 'b']);
    return 'x';
  });
}

/** The bounded set of cases for one route: each bad parameter, query and body once, then seeded mixtures. */
function casesFor(route: Route, rng: Rng, valid: Valid, mixtures: number): Case[] {
  const hasParams = route.path.includes('{');
  const hasBody = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(route.method);
  const build = (o: { bad?: boolean; query?: string; body?: string | undefined; ct?: string; headers?: [string, string][] }): Case => {
    const headers: Record<string, string> = { authorization: `Bearer ${pick(rng, [ADMIN, ADMIN, AGENT])}` };
    for (const [k, v] of o.headers ?? []) headers[k] = v;
    const c: Case = { method: route.method, url: fillPath(route.path, rng, valid, o.bad ?? false) + (o.query ? `?${o.query}` : ''), headers };
    if (o.body !== undefined && hasBody) {
      c.payload = o.body;
      headers['content-type'] = o.ct ?? 'application/json';
    }
    return c;
  };
  // Each malformed value on a seeded share of the routes (every one of them on some), then mixtures.
  const cases: Case[] = [build({})];
  if (hasParams) for (let i = 0; i < BAD_PARAMS.length / 2; i++) cases.push(build({ bad: true }));
  for (const query of BAD_QUERIES) if (rng() < 0.25) cases.push(build({ query }));
  if (hasBody) {
    for (const body of BODIES) if (rng() < 0.5) cases.push(build({ body }));
    for (const ct of CONTENT_TYPES) if (rng() < 0.5) cases.push(build({ body: pick(rng, ['{}', '{"arguments":{}}', 'a=1', '<x/>']), ct }));
    // Content-Encoding, which the gateway does not decode: a gzipped body and a plain one claiming gzip.
    const gz = build({ body: '{}', headers: [['content-encoding', 'gzip']] });
    gz.payload = gzipSync('{"arguments":{}}');
    cases.push(gz, build({ body: '{"arguments":{}}', headers: [['content-encoding', 'gzip']] }));
  }
  for (const h of GARBAGE_HEADERS) if (rng() < 0.2) cases.push(build({ headers: [h] }));
  for (let i = 0; i < mixtures; i++) {
    cases.push(
      build({
        bad: hasParams && rng() < 0.5,
        ...(rng() < 0.5 ? { query: pick(rng, BAD_QUERIES) } : {}),
        ...(hasBody ? { body: pick(rng, BODIES), ct: pick(rng, CONTENT_TYPES) } : {}),
        headers: Array.from({ length: 1 + Math.floor(rng() * 3) }, () => pick(rng, GARBAGE_HEADERS)),
      }),
    );
  }
  return cases;
}

/** What is wrong with one response, or undefined. */
function problem(c: Case, res: { statusCode: number; headers: Record<string, unknown>; body: string }): string | undefined {
  const { statusCode: status, body } = res;
  if (status === 500) return `500: ${body.slice(0, 300)}`;
  if (status < 100 || status > 599) return `status ${status}`;
  for (const re of LEAKS) if (re.test(body)) return `body leaks ${re}: ${body.slice(0, 300)}`;
  if (typeof res.headers['x-request-id'] !== 'string') return 'no x-request-id';
  if (status < 400 || c.method === 'HEAD') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return `a ${status} that is not JSON: ${body.slice(0, 200)}`;
  }
  if (c.url.split('?')[0] === '/mcp' && validJsonRpcError(parsed)) return undefined; // the transport's own, see README
  if (!validErrorBody(parsed)) return `not the error shape (${ajv.errorsText(validErrorBody.errors)}): ${body.slice(0, 300)}`;
  const { code, retryable } = (parsed as { error: { code: ErrorCode; retryable: boolean } }).error;
  const def = ERROR_CATALOGUE[code];
  if (def.status !== status) return `${code} answered ${status}, the catalogue says ${def.status}`;
  if (def.retryable !== retryable) return `${code} retryable ${retryable}`;
  return undefined;
}

const describeCase = (gw: string, c: Case) =>
  `[${gw}] ${c.method} ${c.url.slice(0, 120)} headers=${JSON.stringify(c.headers).slice(0, 160)} body=${String(c.payload ?? '').slice(0, 80)}`;

function tools(): Record<string, unknown> {
  return {
    'echo.yaml': echoTool('debug.echo'),
    'delay.yaml': {
      name: 'debug.delay',
      description: 'waits',
      sideEffect: 'none',
      inputSchema: { type: 'object', properties: { ms: { type: 'integer', minimum: 0, maximum: 20 } } },
      backends: [{ id: 'b', builtin: 'delay' }],
    },
    'delete.yaml': { ...echoTool('files.delete'), sideEffect: 'destructive' },
    'long.yaml': echoTool(LONG_NAME),
  };
}

/** One raw request over TCP (what inject cannot send): the status line, headers and body of the answer. */
function rawRequest(port: number, data: string | Buffer): Promise<{ statusCode: number; headers: Record<string, string>; body: string; raw: string }> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let raw = '';
    const parse = () => {
      const end = raw.indexOf('\r\n\r\n');
      const [status = '', ...lines] = raw.slice(0, end < 0 ? raw.length : end).split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      const body = end < 0 ? '' : Buffer.from(raw.slice(end + 4), 'latin1').toString('utf8');
      return { statusCode: Number(/^HTTP\/1\.1 (\d{3})/.exec(status)?.[1] ?? 0), headers, body, raw, complete: end >= 0 && Buffer.byteLength(body) >= Number(headers['content-length'] ?? 0) };
    };
    s.setEncoding('latin1');
    s.on('data', (d: string) => {
      raw += d;
      if (parse().complete) s.destroy(); // one answer is all this asks (a kept-alive connection would wait)
    });
    s.on('error', () => undefined);
    s.setTimeout(3000, () => s.destroy());
    s.on('close', () => resolve(parse()));
    s.on('connect', () => s.write(data));
  });
}

describe('fuzzing every route: no 500, one error shape, no stack trace', () => {
  const gateways: { label: string; gw: TestGateway; port: number; valid: Valid }[] = [];

  async function start(label: string, auth: Record<string, unknown> | undefined) {
    // A short headers timeout: a raw request the parser still waits on is answered 408 soon.
    const gw = await startGateway({ tools: tools(), config: { server: { bodyLimitBytes: BODY_LIMIT, headersTimeoutMs: 500 }, ...(auth ? { auth } : {}) } });
    const port = Number(new URL(await gw.app.listen({ port: 0, host: '127.0.0.1' })).port);
    const key = { authorization: `Bearer ${ADMIN}` };
    const asyncCall = await gw.app.inject({ method: 'POST', url: '/v1/tools/debug.echo/call', headers: { ...key, prefer: 'respond-async' }, payload: { arguments: {} } });
    const gated = await gw.call('files.delete', { path: '/x' }, { key: AGENT });
    const valid = {
      name: 'debug.echo',
      callId: (asyncCall.json() as { callId: string }).callId,
      confirmationId: (gated.json() as { confirmation: { id: string } }).confirmation.id,
    };
    gateways.push({ label, gw, port, valid });
  }

  beforeAll(async () => {
    await start('keys', {
      keys: [
        { id: 'ops', key: ADMIN, roles: ['agent', 'approver', 'admin'] },
        { id: 'agent-1', key: AGENT, roles: ['agent'] },
      ],
    });
    await start('keyless', undefined);
  });
  afterAll(async () => {
    for (const g of gateways) await g.gw.close();
  });

  const inject = (g: (typeof gateways)[number], c: Case): Promise<LightMyRequestResponse> =>
    g.gw.app.inject({ method: c.method as 'GET', url: c.url, headers: c.headers, ...(c.payload !== undefined ? { payload: c.payload } : {}) });

  it('the issue\'s examples: HEAD /mcp, bad percent-encoding, long parameters, /messages "Session not found"', async () => {
    for (const g of gateways) {
      const key = { authorization: `Bearer ${ADMIN}` };
      const expectError = (res: LightMyRequestResponse, status: number, code: ErrorCode) => {
        expect(res.statusCode, res.body).toBe(status);
        if (res.body !== '') expect(res.json()).toMatchObject({ error: { code, modelMessage: expect.any(String) } });
        expect(res.headers['x-request-id']).toEqual(expect.any(String));
        expect(res.headers['content-type']).toMatch(/^application\/json/);
      };
      expectError(await g.gw.app.inject({ method: 'HEAD', url: '/mcp', headers: key }), 404, 'NOT_FOUND');
      expectError(await g.gw.app.inject({ method: 'GET', url: '/%zz', headers: key }), 400, 'BAD_REQUEST');
      expectError(await g.gw.app.inject({ method: 'GET', url: '/v1/tools/%E0%A4%A', headers: key }), 400, 'BAD_REQUEST');
      // Names up to the schema's 256 characters reach the route; the router bounds a segment at 1024.
      expectError(await g.gw.app.inject({ method: 'GET', url: `/v1/tools/${'a'.repeat(200)}`, headers: key }), 404, 'TOOL_NOT_FOUND');
      expectError(await g.gw.app.inject({ method: 'GET', url: `/v1/tools/${'a'.repeat(300)}`, headers: key }), 400, 'BAD_REQUEST');
      expectError(await g.gw.app.inject({ method: 'GET', url: `/v1/tools/${'a'.repeat(1100)}`, headers: key }), 414, 'URI_TOO_LONG');
      expectError(await g.gw.app.inject({ method: 'POST', url: '/messages?sessionId=nope', headers: { ...key, 'content-type': 'application/json' }, payload: '{}' }), 404, 'NOT_FOUND');
      expectError(await g.gw.app.inject({ method: 'POST', url: '/v1/tools/debug.echo/call', headers: { ...key, 'content-type': 'application/json' }, payload: '{bad' }), 400, 'BAD_REQUEST');
      expectError(await g.gw.app.inject({ method: 'POST', url: '/v1/tools/debug.echo/call', headers: { ...key, 'content-type': 'application/xml' }, payload: '<a/>' }), 400, 'BAD_REQUEST');
      // The longest tool name a tool file may have is reachable over REST (Fastify's 100-character default refused it with 414).
      const long = await g.gw.app.inject({ method: 'POST', url: `/v1/tools/${LONG_NAME}/call`, headers: key, payload: { arguments: { a: 1 } } });
      expect(long.statusCode, long.body).toBe(200);
      expect((await g.gw.app.inject({ method: 'GET', url: `/v1/tools/${LONG_NAME}`, headers: key })).statusCode).toBe(200);
    }
  });

  it('/messages of a live legacy SSE session: a malformed message is 400 in the one shape', async () => {
    const g = gateways[0]!;
    const stream = new AbortController();
    const res = await fetch(`http://127.0.0.1:${g.port}/sse`, { headers: { authorization: `Bearer ${ADMIN}` }, signal: stream.signal });
    const reader = res.body!.getReader();
    let text = '';
    while (!/sessionId=(\S+)/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
    const sessionId = /sessionId=(\S+)/.exec(text)![1]!;
    try {
      for (const payload of ['{bad', '"x"', '{"jsonrpc":"1.0"}', '[]']) {
        const r = await g.gw.app.inject({ method: 'POST', url: `/messages?sessionId=${sessionId}`, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, payload });
        expect(problem({ method: 'POST', url: '/messages', headers: {} }, r), payload).toBeUndefined();
        expect(r.statusCode, payload).toBe(400);
      }
      // Another key's session is not found either, in the same shape.
      const other = await g.gw.app.inject({ method: 'POST', url: `/messages?sessionId=${sessionId}`, headers: { authorization: `Bearer ${AGENT}`, 'content-type': 'application/json' }, payload: '{}' });
      expect(other.statusCode).toBe(404);
      expect(other.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
    } finally {
      stream.abort();
    }
  });

  it('/mcp: the gateway\'s own refusals in the one shape; the transport\'s protocol errors stay JSON-RPC', async () => {
    const g = gateways[0]!;
    const noKey = await g.gw.app.inject({ method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json' }, payload: '{}' });
    expect(noKey.statusCode).toBe(401);
    expect(noKey.json()).toMatchObject({ error: { code: 'UNAUTHENTICATED' } });
    const parse = await g.gw.app.inject({ method: 'POST', url: '/mcp', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, payload: '{bad' });
    expect(parse.statusCode).toBe(400);
    expect(parse.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    const big = await g.gw.app.inject({ method: 'POST', url: '/mcp', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, payload: 'x'.repeat(BODY_LIMIT + 1) });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toMatchObject({ error: { code: 'PAYLOAD_TOO_LARGE' } });
  });

  it('every route of the OpenAPI document, fed bounded malformed input, on a gateway with keys and a keyless one', async () => {
    const rng = seededRng(SEED);
    const failures: string[] = [];
    let sent = 0;
    for (const g of gateways) {
      for (const route of routes()) {
        for (const c of casesFor(route, rng, g.valid, 12)) {
          // A GET /sse that passes the key check opens a stream that never ends: only its refusals are fuzzed.
          if (route.path === '/sse' && route.method === 'GET') c.headers['authorization'] = pick(rng, ['Bearer nope', 'Basic x', '']);
          if (route.path === '/sse' && route.method === 'GET' && g.label === 'keyless') continue;
          const res = await inject(g, c);
          sent++;
          const p = problem(c, res);
          if (p) failures.push(`${describeCase(g.label, c)} → ${res.statusCode}: ${p}`);
        }
      }
    }
    expect(sent).toBeGreaterThan(6000);
    expect(failures.slice(0, 15)).toEqual([]);
  }, 60_000); // some 7,000 requests: 4 to 10 s, more on a busy machine

  it('raw malformed HTTP over a socket (what inject cannot send): Node\'s parser errors in the one shape', async () => {
    const g = gateways[0]!;
    const rng = seededRng(SEED + 1);
    const head = (extra: string) => `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}\r\n`;
    const raws: [string | Buffer, number][] = [
      ['GARBAGE\r\n\r\n', 400],
      [head(`X-Big: ${'a'.repeat(20_000)}\r\n`), 431],
      [`GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`, 431],
      [head('X-A: b\x01c\r\n'), 400],
      [head('No colon here\r\n'), 400],
      ['GET /healthz HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n', 400],
      ['GET /healthz HTTP/1.1\r\n\r\n', 400], // HTTP/1.1 without Host
      ['POST /v1/route HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n', 400],
      ['POST /v1/route HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabc', 400],
      ['POST /v1/route HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400],
      [`POST /v1/route HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ADMIN}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`, 400],
      [head('Expect: something-else\r\n'), 200], // not Node's bare 417: the expectation is ignored
      [`GET /%zz HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ADMIN}\r\n\r\n`, 400],
      [`GET /v1/tools/${'a'.repeat(1100)} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ADMIN}\r\n\r\n`, 414],
      [Buffer.from([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03]), 400], // a TLS ClientHello
    ];
    // Seeded garbage request lines and header blocks.
    for (let i = 0; i < 12; i++) {
      const bytes = Buffer.from(Array.from({ length: 8 + Math.floor(rng() * 60) }, () => Math.floor(rng() * 256)));
      raws.push([Buffer.concat([Buffer.from(pick(rng, ['GET /', 'POST /v1/route HTTP/1.1\r\n', '', 'GET / HTTP/1.1\r\nX: '])), bytes, Buffer.from('\r\n\r\n')]), 0]);
    }
    const failures: string[] = [];
    const answers = await Promise.all(raws.map(([data]) => rawRequest(g.port, data)));
    for (const [i, [data, expected]] of raws.entries()) {
      const res = answers[i]!;
      const what = JSON.stringify(data.toString('latin1').slice(0, 60));
      if (expected !== 0 && res.statusCode !== expected) failures.push(`${what}: ${res.statusCode}, expected ${expected}: ${res.raw.slice(0, 200)}`);
      if (res.statusCode === 0) continue; // the socket was cut without an answer (nothing to judge)
      const p = problem({ method: 'GET', url: '/', headers: {} }, res);
      if (p) failures.push(`${what} → ${res.statusCode}: ${p}`);
    }
    expect(failures).toEqual([]);
  });
});

describe('a request that arrives while the server is closing', () => {
  it('is answered 503 UNAVAILABLE in the one shape, with Connection: close', async () => {
    const gw = await startGateway({ tools: { 'delay.yaml': { name: 'debug.delay', description: 'waits', sideEffect: 'none', backends: [{ id: 'b', builtin: 'delay' }] } } });
    const port = Number(new URL(await gw.app.listen({ port: 0, host: '127.0.0.1' })).port);
    const s = connect(port, '127.0.0.1');
    let raw = '';
    s.setEncoding('utf8');
    s.on('data', (d: string) => (raw += d));
    const closed = new Promise((resolve) => s.once('close', resolve));
    await new Promise((resolve) => s.once('connect', resolve));
    // A call keeps the connection busy while the server starts closing; the next request is read then.
    const body = JSON.stringify({ arguments: { ms: 400 } });
    s.write(`POST /v1/tools/debug.delay/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    await until(() => gw.app.gw.inFlight.count > 0, 'the call running');
    const closing = gw.close();
    await until(() => !gw.app.server.listening, 'the server closing');
    s.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await closing;
    await closed;
    const second = raw.slice(raw.indexOf('HTTP/1.1', 10));
    expect(raw).toMatch(/^HTTP\/1\.1 200 /);
    expect(second).toMatch(/^HTTP\/1\.1 503 /);
    expect(second).toMatch(/connection: close/i);
    const json = JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4)) as unknown;
    expect(validErrorBody(json)).toBe(true);
    expect(json).toMatchObject({ error: { code: 'UNAVAILABLE', retryable: true } });
  });
});
