import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { echoTool, httpTool, startGateway, type TestGateway } from '../helpers/app.js';
import { json, Upstream } from '../helpers/upstream.js';
import { until, untilAsync } from '../helpers/wait.js';
import { rawMcpSession, type RawMcpPost } from '../helpers/mcp-raw.js';

const KEY = 'mcp-fast-key-000001';

/**
 * /mcp without tools approvable by elicitation: a plain tools/call on an established session is
 * answered as one JSON response straight from the pipeline; a call with a progress token still
 * gets the SDK's SSE stream; a client's notifications/cancelled reaches a JSON-answered call.
 */
describe('/mcp answers plain tools/call as JSON', () => {
  let gw: TestGateway;
  let up: Upstream;
  let base: string;
  let session = '';
  let post: RawMcpPost;
  const held: (() => void)[] = [];

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((req, res) => {
      if (req.url === '/held') return void held.push(() => json(res, 200, { released: true }));
      const ms = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('ms') ?? 0);
      setTimeout(() => !res.destroyed && json(res, 200, { slept: ms }), ms);
    });
    gw = await startGateway({
      config: { auth: { keys: [{ id: 'agent-1', key: KEY, roles: ['agent'] }] } },
      tools: {
        'echo.yaml': echoTool('debug.echo', { inputSchema: { type: 'object', required: ['message'], properties: { message: { type: 'string' } } } }),
        'slow.yaml': httpTool('debug.slow', `${up.url}/slow?ms={{ms}}`, { inputSchema: { type: 'object', properties: { ms: { type: 'integer' } } } }),
        'wipe.yaml': { ...echoTool('ops.wipe'), sideEffect: 'destructive' },
        'held.yaml': httpTool('debug.held', `${up.url}/held`),
      },
    });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    ({ session, post } = await rawMcpSession(base, KEY));
  });
  afterAll(async () => {
    for (const release of held.splice(0)) release();
    await gw?.close();
    await up?.close();
  });

  it('a plain tools/call gets one JSON response with the result, and is audited like any call', async () => {
    const res = await post({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'debug.echo', arguments: { message: 'fast <one>' } } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.headers.get('mcp-session-id')).toBe(session);
    const body = (await res.json()) as { jsonrpc: string; id: number; result: { content: { text: string }[]; isError: boolean } };
    expect(body).toMatchObject({ jsonrpc: '2.0', id: 7, result: { isError: false } });
    expect(body.result.content[0]?.text).toContain('fast <one>');
    const rec = (await gw.audit()).find((r) => r['tool'] === 'debug.echo' && JSON.stringify(r['args']).includes('fast <one>'));
    expect(rec).toMatchObject({ outcome: 'ok', sessionId: expect.stringMatching(/^mcp:/) });
  });

  it('sends the status and headers while the call runs and the body when it ends; nothing stays counted in flight', async () => {
    // fetch resolves on the headers: here before the upstream has answered (it holds until released)
    const res = await post({ jsonrpc: '2.0', id: 'held-1', method: 'tools/call', params: { name: 'debug.held', arguments: {} } }, { 'x-request-id': 'fast-held-1' });
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBe(session);
    expect(res.headers.get('x-request-id')).toBe('fast-held-1');
    await until(() => held.length === 1, 'the upstream to be reached');
    expect(gw.app.gw.inFlight.count).toBeGreaterThan(0);
    held.shift()?.();
    const body = (await res.json()) as { id: string; result: { isError: boolean; content: { text: string }[] } };
    expect(body).toMatchObject({ id: 'held-1', result: { isError: false } });
    expect(body.result.content[0]?.text).toContain('released');
    await until(() => gw.app.gw.inFlight.count === 0, 'no work left in flight');
  });

  it('failures and gates are results too: invalid arguments (isError) and a pending confirmation', async () => {
    const bad = (await (await post({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'debug.echo', arguments: {} } })).json()) as { result: { isError: boolean; content: { text: string }[] } };
    expect(bad.result.isError).toBe(true);
    expect(bad.result.content[0]?.text).toContain('INVALID_ARGUMENTS');
    const gated = (await (await post({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'ops.wipe', arguments: {} } })).json()) as { result: { isError: boolean; content: { text: string }[] } };
    expect(gated.result.isError).toBe(false);
    expect(gated.result.content[0]?.text).toMatch(/needs a person's approval \(confirmation cf_/);
  });

  it('a call with a progress token, or a malformed call, goes through the SDK (SSE answer, JSON-RPC error)', async () => {
    const streamed = await post({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'debug.echo', arguments: { message: 'slow path' }, _meta: { progressToken: 'p1' } } });
    expect(streamed.headers.get('content-type')).toContain('text/event-stream');
    expect(await streamed.text()).toContain('slow path');
    const malformed = await post({ jsonrpc: '2.0', id: 11, method: 'tools/call', params: { arguments: {} } });
    expect(await malformed.text()).toMatch(/"id":11,"error":\{"code":-326/);
  });

  it("the client's notifications/cancelled aborts a JSON-answered call's upstream request", async () => {
    const pending = post({ jsonrpc: '2.0', id: 'slow-1', method: 'tools/call', params: { name: 'debug.slow', arguments: { ms: 5000 } } });
    await until(() => up.seen.some((s) => s.url === '/slow?ms=5000'), 'the upstream to be reached');
    const cancelled = await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow-1', reason: 'user stop' } });
    expect(cancelled.status).toBe(202);
    await until(() => up.seen.find((s) => s.url === '/slow?ms=5000')?.aborted === true, 'the upstream request to be aborted');
    await (await pending).text();
  });

  it('a client that goes away after the headers cancels the call: the upstream request is aborted, the call audited, nothing left in flight', async () => {
    const gone = new AbortController();
    const res = await post({ jsonrpc: '2.0', id: 'gone-1', method: 'tools/call', params: { name: 'debug.slow', arguments: { ms: 7000 } } }, {}, gone.signal);
    expect(res.status).toBe(200); // the head came before the call ended
    await until(() => up.seen.some((s) => s.url === '/slow?ms=7000'), 'the upstream to be reached');
    gone.abort();
    await until(() => up.seen.find((s) => s.url === '/slow?ms=7000')?.aborted === true, 'the upstream request to be aborted');
    await until(() => gw.app.gw.inFlight.count === 0, 'no work left in flight');
    await untilAsync(async () => (await gw.audit()).some((r) => r['tool'] === 'debug.slow' && JSON.stringify(r['args']).includes('7000') && r['outcome'] === 'error'), 'the cancelled call in the audit');
  });

  it("the SDK's own client works against it unchanged", async () => {
    const client = new Client({ name: 'sdk', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${KEY}` } } }));
    try {
      const r = await client.callTool({ name: 'debug.echo', arguments: { message: 'via sdk' } });
      expect(JSON.stringify(r.content)).toContain('via sdk');
    } finally {
      await client.close();
    }
  });
});
