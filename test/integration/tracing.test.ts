import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Upstream, json } from '../helpers/upstream.js';
import { until } from '../helpers/wait.js';
import { startGateway, type TestGateway } from '../helpers/app.js';

/** One span as the OTLP/HTTP JSON exporter sends it, attributes flattened. */
interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  status?: { code?: number; message?: string };
  attrs: Record<string, unknown>;
}

/** A tiny OTLP/HTTP (JSON) receiver on 127.0.0.1. */
class Receiver {
  readonly bodies: string[] = [];
  readonly spans: ReceivedSpan[] = [];
  readonly resources: Record<string, unknown>[] = [];
  readonly contentTypes: string[] = [];
  private readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      this.bodies.push(body);
      this.contentTypes.push(String(req.headers['content-type']));
      const doc = JSON.parse(body) as { resourceSpans: { resource: { attributes: Attr[] }; scopeSpans: { spans: (Omit<ReceivedSpan, 'attrs'> & { attributes?: Attr[] })[] }[] }[] };
      for (const rs of doc.resourceSpans) {
        this.resources.push(flatten(rs.resource.attributes));
        for (const ss of rs.scopeSpans) for (const s of ss.spans) this.spans.push({ ...s, attrs: flatten(s.attributes ?? []) });
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  url = '';

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/traces`;
    return this;
  }

  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

interface Attr {
  key: string;
  value: { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
}

function flatten(attrs: Attr[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of attrs) {
    out[key] = value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : undefined) ?? value.boolValue ?? value.doubleValue;
  }
  return out;
}

const hex = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join('');
const PLANTED = 'planted-argument-Zq7xK9';
const SERVER = 2; // OTLP SpanKind (the API enum + 1)
const CLIENT = 3;

/** An MCP server over Streamable HTTP (stateless) whose tool answers with the `_meta` it was sent. */
async function metaServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    const mcp = new McpServer({ name: 'meta', version: '1.0.0' });
    mcp.registerTool('whoami', { description: 'answers with the request _meta', annotations: { readOnlyHint: true } }, (extra) => ({
      content: [{ type: 'text', text: JSON.stringify(extra._meta ?? {}) }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('tracing (OpenTelemetry over OTLP/HTTP)', () => {
  let a: Upstream;
  let b: Upstream;
  let receiver: Receiver;
  let mcp: { url: string; close: () => Promise<void> };
  let gw: TestGateway;
  const tools = () => ({
    'traced.yaml': {
      name: 't.traced',
      description: 'fails on its first backend, answers on the second',
      sideEffect: 'read',
      inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
      backends: [
        { id: 'primary', priority: 0, http: { url: `${a.url}/fail?q={{q}}` } },
        { id: 'replica', priority: 1, http: { url: `${b.url}/ok?q={{q}}` } },
      ],
    },
    'own-header.yaml': {
      name: 't.own_header',
      description: 'sets traceparent itself',
      sideEffect: 'read',
      backends: [{ id: 'only', http: { url: `${b.url}/own`, headers: { Traceparent: 'fixed-by-tool' } } }],
    },
    'falls.yaml': {
      name: 't.falls',
      description: 'always fails, falls back to t.traced',
      sideEffect: 'read',
      retry: { attempts: 1 },
      inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
      backends: [{ id: 'dead', http: { url: `${a.url}/fail-too` } }],
      fallback: { tool: 't.traced' },
    },
    'meta.yaml': { kind: 'mcp-server', name: 'meta', transport: 'streamable-http', url: mcp.url, prestart: true, pool: { pingIntervalMs: 0 } },
  });

  beforeAll(async () => {
    a = await new Upstream().start();
    b = await new Upstream().start();
    a.on((_req, res) => json(res, 503, { error: 'down' }));
    b.on((req, res) => json(res, 200, { from: 'b', path: req.url }));
    receiver = await new Receiver().start();
    mcp = await metaServer();
    gw = await startGateway({
      tools: tools(),
      config: { tracing: { enabled: true, endpoint: receiver.url, serviceName: 'toolgate-test', exportDelayMs: 20 } },
    });
  });

  afterAll(async () => {
    await gw?.close();
    await mcp?.close();
    await receiver?.close();
    await a?.close();
    await b?.close();
  });

  it('exports one call span under the agent\'s traceparent, with an attempt span per backend tried', async () => {
    const traceId = hex(32);
    const parentId = hex(16);
    const res = await gw.call('t.traced', { q: PLANTED }, { headers: { traceparent: `00-${traceId}-${parentId}-01` } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ backend: 'replica', attempts: 2, policy: { tried: ['primary', 'replica'], failover: true } });
    const callId = res.json().callId as string;

    await until(() => receiver.trace(traceId).length >= 3, 'three spans exported');
    const spans = receiver.trace(traceId);
    expect(spans).toHaveLength(3);
    const call = spans.find((s) => s.name === 'toolgate.call t.traced')!;
    expect(call).toBeDefined();
    expect(call.parentSpanId).toBe(parentId);
    expect(call.kind).toBe(SERVER);
    expect(call.attrs).toMatchObject({
      'toolgate.tool': 't.traced',
      'toolgate.call_id': callId,
      'toolgate.caller': expect.any(String),
      'toolgate.outcome': 'ok',
      'toolgate.backend': 'replica',
      'toolgate.attempts': 2,
      'toolgate.cached': false,
    });
    expect(call.attrs['toolgate.error_code']).toBeUndefined();

    const attempts = spans.filter((s) => s.name.startsWith('toolgate.attempt '));
    expect(attempts.map((s) => s.name)).toEqual(expect.arrayContaining(['toolgate.attempt primary', 'toolgate.attempt replica']));
    for (const s of attempts) {
      expect(s.parentSpanId).toBe(call.spanId);
      expect(s.kind).toBe(CLIENT);
    }
    const first = attempts.find((s) => s.attrs['toolgate.backend'] === 'primary')!;
    const second = attempts.find((s) => s.attrs['toolgate.backend'] === 'replica')!;
    expect(first.attrs).toMatchObject({
      'toolgate.tool': 't.traced',
      'toolgate.backend_kind': 'http',
      'toolgate.attempt': 1,
      'toolgate.outcome': 'error',
      'toolgate.error_code': 'UPSTREAM_ERROR',
      'http.response.status_code': 503,
      'toolgate.breaker_state': 'closed',
      'toolgate.retry': false,
      'toolgate.failover': false,
    });
    expect(first.status?.code).toBe(2); // ERROR
    expect(second.attrs).toMatchObject({
      'toolgate.attempt': 2,
      'toolgate.outcome': 'ok',
      'toolgate.breaker_state': 'closed',
      'toolgate.retry': false,
      'toolgate.failover': true,
    });
    expect(second.attrs['toolgate.error_code']).toBeUndefined();
    expect(receiver.resources.at(-1)).toMatchObject({ 'service.name': 'toolgate-test' });
    expect(receiver.contentTypes.every((c) => c.startsWith('application/json'))).toBe(true);

    // Each upstream was told its own attempt's span: same trace, that span as the parent.
    const toA = a.seen.filter((r) => r.url.startsWith('/fail')).at(-1)!;
    const toB = b.seen.filter((r) => r.url.startsWith('/ok')).at(-1)!;
    expect(toB.headers['traceparent']).toBe(`00-${traceId}-${second.spanId}-01`);
    expect(toA.headers['traceparent']).toBe(`00-${traceId}-${first.spanId}-01`);

    // No argument value anywhere in what was exported (the URL carried it to the upstream).
    expect(toB.url).toContain(PLANTED);
    expect(receiver.bodies.join('\n')).not.toContain(PLANTED);
  });

  it('marks a failed call ERROR with its code, and starts a new trace without a traceparent', async () => {
    const before = new Set(receiver.spans.map((s) => s.traceId));
    const res = await gw.call('t.traced', { q: 1 }); // not a string: 422 before any backend
    expect(res.statusCode).toBe(422);
    await until(() => receiver.spans.some((s) => !before.has(s.traceId) && s.name === 'toolgate.call t.traced'), 'the failed call exported');
    const call = receiver.spans.find((s) => !before.has(s.traceId) && s.name === 'toolgate.call t.traced')!;
    expect(call.parentSpanId ?? '').toBe('');
    expect(call.status).toMatchObject({ code: 2, message: 'INVALID_ARGUMENTS' });
    expect(call.attrs).toMatchObject({ 'toolgate.outcome': 'error', 'toolgate.error_code': 'INVALID_ARGUMENTS', 'toolgate.attempts': 0 });
    expect(receiver.spans.filter((s) => s.traceId === call.traceId)).toHaveLength(1);
  });

  it('honours an unsampled traceparent: nothing exported, the context still propagated', async () => {
    const traceId = hex(32);
    const res = await gw.call('t.traced', { q: 'x' }, { headers: { traceparent: `00-${traceId}-${hex(16)}-00` } });
    expect(res.statusCode).toBe(200);
    const toB = b.seen.filter((r) => r.url.startsWith('/ok')).at(-1)!;
    expect(toB.headers['traceparent']).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
    await gw.call('t.traced', { q: 'y' }); // a sampled call exported after it shows the unsampled one was skipped
    await until(() => receiver.spans.length > 0 && receiver.spans.some((s) => s.attrs['toolgate.outcome'] === 'ok' && s.traceId !== traceId && s.name.startsWith('toolgate.call')));
    await new Promise((r) => setTimeout(r, 100));
    expect(receiver.trace(traceId)).toEqual([]);
  });

  it('nests a fallback tool\'s call span under the failing call\'s span', async () => {
    const traceId = hex(32);
    const res = await gw.call('t.falls', { q: 'f' }, { headers: { traceparent: `00-${traceId}-${hex(16)}-01` } });
    expect(res.statusCode).toBe(200);
    expect(res.json().fallback).toMatchObject({ kind: 'tool', tool: 't.traced' });
    await until(() => receiver.trace(traceId).length >= 5, 'five spans exported');
    const spans = receiver.trace(traceId);
    const outer = spans.find((s) => s.name === 'toolgate.call t.falls')!;
    const inner = spans.find((s) => s.name === 'toolgate.call t.traced')!;
    expect(outer.attrs).toMatchObject({ 'toolgate.outcome': 'fallback', 'toolgate.fallback': 'tool', 'toolgate.backend': 't.traced/replica' });
    expect(inner.parentSpanId).toBe(outer.spanId);
    expect(spans.find((s) => s.name === 'toolgate.attempt dead')!.parentSpanId).toBe(outer.spanId);
    expect(spans.filter((s) => s.parentSpanId === inner.spanId).map((s) => s.name).sort()).toEqual(['toolgate.attempt primary', 'toolgate.attempt replica']);
  });

  it('keeps a traceparent header the tool file sets itself', async () => {
    const res = await gw.call('t.own_header', {}, { headers: { traceparent: `00-${hex(32)}-${hex(16)}-01` } });
    expect(res.statusCode).toBe(200);
    expect(b.seen.filter((r) => r.url === '/own').at(-1)!.headers['traceparent']).toBe('fixed-by-tool');
  });

  it('sends the attempt\'s trace context to an MCP server in the request _meta', async () => {
    const traceId = hex(32);
    const res = await gw.call('meta.whoami', {}, { headers: { traceparent: `00-${traceId}-${hex(16)}-01`, tracestate: 'vendor=abc' } });
    expect(res.statusCode).toBe(200);
    const meta = JSON.parse(res.json().result.content[0].text as string) as Record<string, unknown>;
    await until(() => receiver.trace(traceId).length >= 2, 'MCP call spans exported');
    const attempt = receiver.trace(traceId).find((s) => s.attrs['toolgate.backend_kind'] === 'mcp')!;
    expect(attempt).toBeDefined();
    expect(attempt.name).toMatch(/^toolgate\.attempt /);
    expect(meta).toMatchObject({ traceparent: `00-${traceId}-${attempt.spanId}-01`, tracestate: 'vendor=abc' });
  });

  it('off (the default): no spans, no exporter traffic, no traceparent to the upstream', async () => {
    const off = new Receiver();
    await off.start();
    // An endpoint but not enabled: still off.
    const plain = await startGateway({ tools: { 'traced.yaml': tools()['traced.yaml'] }, config: { tracing: { endpoint: off.url, exportDelayMs: 1 } } });
    try {
      expect(plain.app.gw.tracing).toBeUndefined();
      const res = await plain.call('t.traced', { q: 'off' }, { headers: { traceparent: `00-${hex(32)}-${hex(16)}-01` } });
      expect(res.statusCode).toBe(200);
      const toB = b.seen.filter((r) => r.url.startsWith('/ok')).at(-1)!;
      expect(toB.url).toContain('off');
      expect(toB.headers['traceparent']).toBeUndefined();
      expect(toB.headers['tracestate']).toBeUndefined();
    } finally {
      await plain.close();
      await off.close();
    }
    expect(off.bodies).toEqual([]);
  });
});
