import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoTool, startGateway, type TestGateway } from '../helpers/app.js';
import { rawMcpSession } from '../helpers/mcp-raw.js';
import { Upstream } from '../helpers/upstream.js';

/** `{"a":[[…]]}` with `levels` levels in all, as JSON text (built as text: no recursion to make it). */
function deepArgs(levels: number): string {
  return `{"a":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;
}

/** An object nested `levels` deep, built from the text (JSON.parse takes any depth). */
const deepValue = (levels: number): unknown => JSON.parse(deepArgs(levels));

function expectErrorShape(body: unknown, code: string): { message: string; modelMessage: string } {
  const err = (body as { error: Record<string, unknown> }).error;
  expect(Object.keys(err).sort()).toEqual(['code', 'details', 'message', 'modelMessage', 'retryable']);
  expect(err['code']).toBe(code);
  expect(err['retryable']).toBe(false);
  expect(JSON.stringify(err)).not.toMatch(/RangeError|stack|at .*\.js/);
  return err as { message: string; modelMessage: string };
}

/**
 * Nesting is bounded at the edges: arguments deeper than `limits.maxArgumentDepth` are a 422 on
 * every entry path, a reply deeper than `limits.maxResultDepth` is a 502 that is never retried,
 * and every such call leaves its audit record (no 500, no RangeError).
 */
describe('deeply nested arguments and replies', () => {
  let up: Upstream;
  let gw: TestGateway;
  let base: string;

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((req, res) => {
      const levels = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('levels'));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"ok":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`);
    });
    const replyArgs = { type: 'object', required: ['levels'], properties: { levels: { type: 'integer' } } };
    gw = await startGateway({
      tools: {
        'echo.yaml': echoTool('deep.echo'),
        'write.yaml': {
          name: 'deep.write', description: 'A write whose reply nests deep.', sideEffect: 'write', confirm: false, inputSchema: replyArgs,
          backends: [{ id: 'api', http: { method: 'POST', url: `${up.url}/write?levels={{levels}}`, body: { levels: '{{levels}}' } } }],
        },
        'read.yaml': {
          name: 'deep.read', description: 'A read whose reply nests deep.', sideEffect: 'read', inputSchema: replyArgs, retry: { attempts: 3 },
          backends: [{ id: 'api', http: { url: `${up.url}/read?levels={{levels}}` } }],
        },
      },
    });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await gw?.close();
    await up?.close();
  });

  const lastRecord = async (tool: string) => (await gw.audit()).filter((r) => r['tool'] === tool).at(-1) as Record<string, unknown>;

  it.each([6_000, 100_000])('REST: arguments %i levels deep are a 422 naming the limit, with an audit record', async (levels) => {
    const res = await gw.app.inject({ method: 'POST', url: '/v1/tools/deep.echo/call', headers: { 'content-type': 'application/json', 'x-request-id': `deep-${levels}` }, payload: `{"arguments":${deepArgs(levels)}}` });
    expect(res.statusCode).toBe(422);
    const err = expectErrorShape(res.json(), 'INVALID_ARGUMENTS');
    expect(err.message).toContain("arguments for 'deep.echo'");
    expect(err.modelMessage).toContain('deeper than 64 levels');
    const record = (await gw.audit()).find((r) => r['requestId'] === `deep-${levels}`);
    expect(record).toMatchObject({ tool: 'deep.echo', outcome: 'error', errorCode: 'INVALID_ARGUMENTS' });
    expect(JSON.stringify(record?.['args'])).toContain('[TOO DEEP]');
    expect(record?.['argsDigest']).toMatch(/^sha256:/);
  });

  it('a batch: each too-deep entry is its own error, the others run, each has its audit record', async () => {
    const body = `{"calls":[{"tool":"deep.echo","arguments":${deepArgs(6_000)}},{"tool":"deep.echo","arguments":{"fine":1}},{"tool":"deep.echo","arguments":${deepArgs(100_000)}}]}`;
    const res = await gw.app.inject({ method: 'POST', url: '/v1/calls', headers: { 'content-type': 'application/json', 'x-request-id': 'deep-batch' }, payload: body });
    expect(res.statusCode).toBe(200);
    const results = res.json().results as { status: string; error?: { code: string; modelMessage: string } }[];
    expect(results.map((r) => r.status)).toEqual(['error', 'ok', 'error']);
    for (const r of [results[0], results[2]]) {
      expect(r?.error?.code).toBe('INVALID_ARGUMENTS');
      expect(r?.error?.modelMessage).toContain('deeper than 64 levels');
    }
    const records = (await gw.audit()).filter((r) => r['requestId'] === 'deep-batch');
    expect(records.map((r) => r['outcome']).sort()).toEqual(['error', 'error', 'ok']);

    const openai = { tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'deep__echo', arguments: deepArgs(100_000) } }] };
    const o = await gw.app.inject({ method: 'POST', url: '/v1/calls?format=openai', payload: openai });
    expect(o.statusCode).toBe(200);
    expect(o.json().messages[0].content).toContain('deeper than 64 levels');
  });

  it('/mcp tools/call: too-deep arguments are a tool error naming the limit, and audited', async () => {
    const { session } = await rawMcpSession(base, 'none');
    // The last one carries a progress token: answered by the MCP SDK's transport (a stream), not the gateway's fast path.
    for (const [id, levels, meta] of [[7, 6_000, ''], [8, 100_000, ''], [9, 100_000, '"_meta":{"progressToken":"p1"},']] as const) {
      const res = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
        body: `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{${meta}"name":"deep.echo","arguments":${deepArgs(levels)}}}`,
      });
      expect(res.status).toBe(200);
      const raw = await res.text();
      expect(raw).toContain('"isError":true');
      expect(raw).toContain('deeper than 64 levels');
      expect((await lastRecord('deep.echo'))['errorCode']).toBe('INVALID_ARGUMENTS');
    }
  });

  it('/mcp: any other message nested past 1,000 levels (a client\'s result, params) is an invalid request, not a parse crash', async () => {
    const { session } = await rawMcpSession(base, 'none');
    for (const body of [`{"jsonrpc":"2.0","id":5,"result":${deepArgs(100_000)}}`, `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":${deepArgs(6_000)}}`]) {
      const res = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
        body,
      });
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(JSON.parse(text)).toMatchObject({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: the message nests deeper than 1000 levels' } });
      expect(text).not.toContain('RangeError');
    }
  });

  it('arguments 50 levels deep still work, through the echo and back', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/v1/tools/deep.echo/call', headers: { 'content-type': 'application/json' }, payload: `{"arguments":${deepArgs(50)}}` });
    expect(res.statusCode).toBe(200);
    expect(res.json().result.structuredContent).toEqual(deepValue(50));
  });

  it('a write whose reply nests 8,000 levels: 502 UPSTREAM_ERROR, not retryable, the upstream hit once, the call audited', async () => {
    const before = up.seen.length;
    const res = await gw.call('deep.write', { levels: 8_000 }, { headers: { 'x-request-id': 'deep-write' } });
    expect(res.statusCode).toBe(502);
    const err = expectErrorShape(res.json(), 'UPSTREAM_ERROR');
    expect(err.message).toContain('nests deeper than 512 levels');
    expect(up.seen.slice(before).map((s) => s.method + ' ' + s.url)).toEqual(['POST /write?levels=8000']);
    expect((await gw.audit()).find((r) => r['requestId'] === 'deep-write')).toMatchObject({ tool: 'deep.write', outcome: 'error', errorCode: 'UPSTREAM_ERROR', attempts: 1 });
  });

  it('a read whose reply nests 100,000 levels is not retried either (the same reply would come back)', async () => {
    const before = up.seen.length;
    const res = await gw.call('deep.read', { levels: 100_000 });
    expect(res.statusCode).toBe(502);
    expectErrorShape(res.json(), 'UPSTREAM_ERROR');
    expect(up.seen.length - before).toBe(1);
    const ok = await gw.call('deep.read', { levels: 500 });
    expect(ok.statusCode).toBe(200);
  });
});

describe('the depth ceiling, end to end', () => {
  it('limits.maxArgumentDepth and maxResultDepth at 1000: arguments that deep pass validation, audit and the response; 1001 is refused', async () => {
    const gw = await startGateway({ config: { limits: { maxArgumentDepth: 1000, maxResultDepth: 1000 } }, tools: { 'echo.yaml': echoTool('deep.echo') } });
    try {
      const ok = await gw.app.inject({ method: 'POST', url: '/v1/tools/deep.echo/call', headers: { 'content-type': 'application/json' }, payload: `{"arguments":${deepArgs(1000)}}` });
      expect(ok.statusCode).toBe(200);
      expect(ok.json().result.structuredContent).toEqual(deepValue(1000));
      const over = await gw.app.inject({ method: 'POST', url: '/v1/tools/deep.echo/call', headers: { 'content-type': 'application/json' }, payload: `{"arguments":${deepArgs(1001)}}` });
      expect(over.statusCode).toBe(422);
      const records = (await gw.audit()).filter((r) => r['tool'] === 'deep.echo');
      expect(records.map((r) => r['outcome'])).toEqual(['ok', 'error']);
    } finally {
      await gw.close();
    }
    const bad = startGateway({ config: { limits: { maxArgumentDepth: 1001 } } });
    await expect(bad).rejects.toThrow(/maxArgumentDepth/);
  });
});
