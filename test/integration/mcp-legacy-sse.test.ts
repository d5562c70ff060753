import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { echoTool, startGateway, twoAgents, type TestGateway } from '../helpers/app.js';
import { Upstream } from '../helpers/upstream.js';
import { untilAsync } from '../helpers/wait.js';

const AGENT = 'sse-agent-key-0001';
const OTHER = 'sse-other-key-0002';

type Text = { type: string; text?: string };
const textOf = (r: Record<string, unknown>) => ((r['content'] ?? []) as Text[]).map((b) => b.text ?? '').join('\n');

/** The legacy SSE transport (GET /sse, POST /messages) through the SDK's own SSE client. */
describe('toolgate as an MCP server over the legacy SSE transport', () => {
  let gw: TestGateway;
  let base: string;
  let up: Upstream;
  const clients: Client[] = [];

  async function connect(key = AGENT) {
    const client = new Client({ name: 'sse-test', version: '1.0.0' });
    const auth = { authorization: `Bearer ${key}` };
    const transport = new SSEClientTransport(new URL(`${base}/sse`), {
      requestInit: { headers: auth },
      eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), ...auth } }) },
    });
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
  }

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((req, res) => {
      if (req.url === '/slow') return; // never answers: the gateway must abort it
      res.writeHead(404).end();
    });
    gw = await startGateway({
      config: {
        auth: twoAgents(AGENT, OTHER),
        mcp: { toolNames: 'canonical' }, // the provider names are mcp-tool-names.test.ts's subject
      },
      tools: {
        'echo.yaml': echoTool('debug.echo', { inputSchema: { type: 'object', required: ['message'], properties: { message: { type: 'string' } } } }),
        'delete.yaml': { ...echoTool('files.delete'), sideEffect: 'destructive' },
        'slow.yaml': { name: 'slow.thing', description: 'never answers', sideEffect: 'read', timeoutMs: 20_000, backends: [{ id: 'up', http: { url: `${up.url}/slow` } }] },
      },
    });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    // Streams still open: closing the app must end them, not wait on them.
    await gw.close();
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await up.close();
  });

  it('lists the caller\'s tools and runs calls through the pipeline, audited with the session', async () => {
    const { client } = await connect();
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['debug.echo', 'files.delete', 'slow.thing']);
    const other = await connect(OTHER);
    expect((await other.client.listTools()).tools.map((t) => t.name)).toEqual(['debug.echo']);

    const res = await client.callTool({ name: 'debug.echo', arguments: { message: 'over sse' } });
    expect(res.isError).toBe(false);
    expect(textOf(res)).toContain('over sse');
    // Several calls at once: each answer reaches its own request.
    const many = await Promise.all(Array.from({ length: 8 }, (_, i) => client.callTool({ name: 'debug.echo', arguments: { message: `m${i}` } })));
    many.forEach((r, i) => expect(textOf(r)).toContain(`m${i}`));

    const bad = await client.callTool({ name: 'debug.echo', arguments: { message: 7 } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/INVALID_ARGUMENTS/);
    const gated = await client.callTool({ name: 'files.delete', arguments: { path: '/a' } });
    expect(textOf(gated)).toMatch(/confirmation cf_/);

    const records = await gw.audit();
    const mine = records.filter((r) => r['tool'] === 'debug.echo' && r['caller'] === 'agent-1' && r['outcome'] === 'ok');
    expect(mine.length).toBeGreaterThanOrEqual(9);
    expect(mine.every((r) => typeof r['sessionId'] === 'string' && String(r['sessionId']).length > 0)).toBe(true);
  });

  it('refuses a missing or unknown key, another key\'s session, and a malformed message', async () => {
    expect((await fetch(`${base}/sse`)).status).toBe(401);
    expect((await fetch(`${base}/sse`, { headers: { authorization: 'Bearer nope' } })).status).toBe(401);

    // A raw stream: its first event names the session's message URL.
    const stream = new AbortController();
    const res = await fetch(`${base}/sse`, { headers: { authorization: `Bearer ${AGENT}` }, signal: stream.signal });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    let text = '';
    while (!/data: (\S+)/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
    const endpoint = /event: endpoint\ndata: (\S+)/.exec(text)?.[1] ?? '';
    expect(endpoint).toMatch(/^\/messages\?sessionId=/);
    const sessionId = new URL(endpoint, base).searchParams.get('sessionId') ?? '';
    const post = (key: string, body: string, session = sessionId) =>
      fetch(`${base}/messages?sessionId=${session}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
    const list = JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list', params: {} });
    expect((await post(OTHER, list)).status).toBe(404);
    expect((await post(AGENT, list, 'no-such-session')).status).toBe(404);
    expect((await post(AGENT, '{not json')).status).toBe(400);
    expect((await post(AGENT, JSON.stringify({ hello: 'world' }))).status).toBe(400);
    expect((await post(AGENT, list)).status).toBe(202);
    // The answer to a message goes down the stream.
    while (!text.includes('"id":99')) text += new TextDecoder().decode((await reader.read()).value);
    expect(text).toContain('"tools"');
    stream.abort();
  });

  it('a client that closes its stream cancels its calls still running, and the upstream request with them', async () => {
    const { client } = await connect();
    const aborted = up.nextAbort();
    const seen = up.seen.length;
    const running = client.callTool({ name: 'slow.thing', arguments: {} }).catch((e: unknown) => e);
    await untilAsync(async () => up.seen.length > seen, 'the upstream to get the call');
    const started = Date.now();
    await client.close();
    await aborted; // long before the tool's 20 s timeout
    expect(Date.now() - started).toBeLessThan(5000);
    await running;
    await untilAsync(async () => (await gw.audit()).some((r) => r['tool'] === 'slow.thing' && r['outcome'] === 'error'), 'the audit record');
  });

  it('while the gateway drains, new messages get 503 UNAVAILABLE (a stream may stay open until close)', async () => {
    gw.app.gw.draining = true;
    try {
      const res = await fetch(`${base}/messages?sessionId=any`, {
        method: 'POST',
        headers: { authorization: `Bearer ${AGENT}`, 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('UNAVAILABLE');
    } finally {
      gw.app.gw.draining = false;
    }
  });
});
