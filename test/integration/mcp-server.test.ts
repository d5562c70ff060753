import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ToolListChangedNotificationSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { echoTool, startGateway, twoAgents, type TestGateway } from '../helpers/app.js';

const AGENT = 'mcp-agent-key-0001';
const OTHER = 'mcp-other-key-0002';

type Text = { type: string; text?: string };
const textOf = (r: Record<string, unknown>) => ((r['content'] ?? []) as Text[]).map((b) => b.text ?? '').join('\n');
const confirmationIn = (text: string) => /confirmation (cf_[A-Za-z0-9_-]+)/.exec(text)?.[1];

/** /mcp through the SDK's own Client over Streamable HTTP, against a listening gateway. */
describe('toolgate as an MCP server (/mcp)', () => {
  let gw: TestGateway;
  let base: string;
  const clients: Client[] = [];

  interface ConnectOptions {
    key?: string;
    elicit?: (message: string) => ElicitResult;
    onListChanged?: () => void;
    /** Resolves when the client's GET stream (server-initiated messages) is open. */
    onStream?: () => void;
  }
  async function connect(o: ConnectOptions = {}) {
    const client = new Client({ name: 'toolgate-test', version: '1.0.0' }, { capabilities: o.elicit ? { elicitation: {} } : {} });
    const elicit = o.elicit;
    if (elicit) client.setRequestHandler(ElicitRequestSchema, async (req) => elicit(req.params.message));
    if (o.onListChanged) client.setNotificationHandler(ToolListChangedNotificationSchema, async () => o.onListChanged?.());
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${o.key ?? AGENT}` } },
      fetch: async (url, init) => {
        const res = await fetch(url, init);
        if (init?.method === 'GET' && res.status === 200) o.onStream?.();
        return res;
      },
    });
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
  }

  /** A raw MCP POST, for what no well-behaved client sends. */
  const rawPost = (headers: Record<string, string>, body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) =>
    fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
    });
  const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

  beforeAll(async () => {
    gw = await startGateway({
      config: {
        auth: twoAgents(AGENT, OTHER),
        mcp: { toolNames: 'canonical', allowedOrigins: ['https://console.example.com'], elicitApproval: { tools: ['files.*'] } },
      },
      tools: {
        'echo.yaml': echoTool('debug.echo', {
          inputSchema: { type: 'object', required: ['message'], properties: { message: { type: 'string' } } },
        }),
        'delete.yaml': { ...echoTool('files.delete'), sideEffect: 'destructive' },
        'wipe.yaml': { ...echoTool('ops.wipe'), sideEffect: 'destructive' },
      },
    });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    // Clients stay connected, GET streams open: closing the app must end them, not wait on them.
    await gw.close();
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  });

  it('tools/list offers the caller\'s tools with MCP annotations; tools/call runs through the pipeline and is audited', async () => {
    const { client, transport } = await connect();
    expect(transport.sessionId).toMatch(/^[A-Za-z0-9_-]{32,}$/); // 192 random bits
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['debug.echo', 'files.delete', 'ops.wipe']);
    const del = tools.find((t) => t.name === 'files.delete');
    expect(del?.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });

    const other = await connect({ key: OTHER });
    expect((await other.client.listTools()).tools.map((t) => t.name)).toEqual(['debug.echo']);

    const res = await client.callTool({ name: 'debug.echo', arguments: { message: 'hi' } });
    expect(res.isError).toBe(false);
    expect(JSON.parse(textOf(res))).toEqual({ message: 'hi' });
    expect(res.structuredContent).toEqual({ message: 'hi' });
    const rec = (await gw.audit()).find((r) => r['tool'] === 'debug.echo' && r['outcome'] === 'ok');
    expect(rec).toMatchObject({ caller: 'agent-1', sessionId: expect.stringMatching(/^mcp:[0-9a-f]{16}$/) });
  });

  it('a failed call is a result with isError and the model message, not a protocol error', async () => {
    const { client } = await connect();
    const bad = await client.callTool({ name: 'debug.echo', arguments: { message: 7 } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/^Error INVALID_ARGUMENTS: .*\/message: must be string/);
    const unknown = await client.callTool({ name: 'debug.ecoh', arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/TOOL_NOT_FOUND.*Did you mean 'debug.echo'/);
    const { client: limited } = await connect({ key: OTHER });
    expect(textOf(await limited.callTool({ name: 'files.delete', arguments: {} }))).toMatch(/^Error TOOL_NOT_FOUND/); // not listed to it: unknown
  });

  it('a gated tool, client without elicitation: a non-error result naming the pending confirmation', async () => {
    const { client } = await connect();
    const res = await client.callTool({ name: 'files.delete', arguments: { path: '/a' } });
    expect(res.isError).toBe(false);
    const id = confirmationIn(textOf(res));
    expect((await gw.app.gw.confirmations.get(id!))?.status).toBe('pending');
  });

  it('elicitation accepted: the call runs, approved by the MCP session (audited)', async () => {
    const asked: string[] = [];
    const { client } = await connect({ elicit: (m) => (asked.push(m), { action: 'accept', content: { approve: true } }) });
    const res = await client.callTool({ name: 'files.delete', arguments: { path: '/b' } });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatch(/files\.delete/);
    expect(res.isError).toBe(false);
    expect(JSON.parse(textOf(res))).toEqual({ path: '/b' });
    const audit = await gw.audit();
    const approved = audit.find((r) => r['event'] === 'confirmation' && r['outcome'] === 'approved');
    expect(approved).toMatchObject({ tool: 'files.delete', caller: 'agent-1', approver: 'mcp-session:agent-1' });
    const ran = audit.find((r) => r['event'] === 'call' && r['confirmationId'] === approved?.['confirmationId'] && r['outcome'] === 'ok');
    expect(ran).toMatchObject({ approver: 'mcp-session:agent-1' });
  });

  it('elicitation declined (or cancelled): the confirmation is rejected and the call never runs', async () => {
    for (const action of ['decline', 'cancel'] as const) {
      const { client } = await connect({ elicit: () => ({ action }) });
      const res = await client.callTool({ name: 'files.delete', arguments: { path: `/${action}` } });
      expect(res.isError).toBe(true);
      const id = confirmationIn(textOf(res));
      const conf = await gw.app.gw.confirmations.get(id!);
      expect(conf).toMatchObject({ status: 'rejected', approver: 'mcp-session:agent-1' });
    }
    const { client } = await connect({ elicit: () => ({ action: 'accept', content: { approve: false } }) });
    const res = await client.callTool({ name: 'files.delete', arguments: { path: '/unticked' } });
    expect((await gw.app.gw.confirmations.get(confirmationIn(textOf(res))!))?.status).toBe('rejected');
  });

  it('a tool the config does not open to MCP-client approval stays pending, even when the client could be asked', async () => {
    let asked = 0;
    const { client } = await connect({ elicit: () => (asked++, { action: 'accept', content: { approve: true } }) });
    const res = await client.callTool({ name: 'ops.wipe', arguments: {} });
    expect(asked).toBe(0);
    expect(res.isError).toBe(false);
    expect((await gw.app.gw.confirmations.get(confirmationIn(textOf(res))!))?.status).toBe('pending');
  });

  it('notifies tools/list_changed after a reload', async () => {
    let streamOpen!: () => void;
    const open = new Promise<void>((r) => (streamOpen = r));
    let changed!: () => void;
    const notified = new Promise<void>((r) => (changed = r));
    const { client } = await connect({ onStream: streamOpen, onListChanged: changed });
    await open;
    gw.writeTool('new.yaml', echoTool('debug.fresh'));
    await gw.app.gw.reload();
    await notified;
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('debug.fresh');
  });

  it('401 without a key; 403 for a foreign Origin or a non-loopback Host, before authentication', async () => {
    expect((await rawPost({}, initialize)).status).toBe(401);
    const foreign = await rawPost({ origin: 'http://evil.example' }, initialize);
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as { error: { code: string } }).error.code).toBe('FORBIDDEN');
    expect((await rawPost({ origin: 'http://evil.example', authorization: `Bearer ${AGENT}` }, initialize)).status).toBe(403);
    expect((await rawPost({ origin: 'https://console.example.com', authorization: `Bearer ${AGENT}` }, initialize)).status).toBe(200);
    // Another local web app (a dev server's page) is another origin: refused unless listed.
    expect((await rawPost({ origin: 'http://localhost:3000', authorization: `Bearer ${AGENT}` }, initialize)).status).toBe(403);
    expect((await rawPost({ origin: base, authorization: `Bearer ${AGENT}` }, initialize)).status).toBe(200); // its own origin
    const { port } = new URL(base);
    const rebound = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: { host: `evil.example:${port}`, 'content-type': 'application/json' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(JSON.stringify(initialize));
    });
    expect(rebound).toBe(403);
  });

  it('a session belongs to the key that opened it: another key gets 404, the owner goes on', async () => {
    const { transport } = await connect();
    const sid = transport.sessionId!;
    const common = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    const stolen = await rawPost({ ...common, authorization: `Bearer ${OTHER}` });
    expect(stolen.status).toBe(404);
    const own = await rawPost({ ...common, authorization: `Bearer ${AGENT}` });
    expect(own.status).toBe(200);
    expect((await rawPost({ 'mcp-session-id': 'made-up', authorization: `Bearer ${AGENT}` })).status).toBe(404);
  });

  it('counts its calls for the shutdown drain, and refuses new MCP requests while draining', async () => {
    const { client } = await connect();
    await client.callTool({ name: 'debug.echo', arguments: { message: 'x' } });
    expect(gw.app.gw.inFlight.count).toBe(0);
    gw.app.gw.draining = true;
    try {
      expect((await rawPost({ authorization: `Bearer ${AGENT}` }, initialize)).status).toBe(503);
    } finally {
      gw.app.gw.draining = false;
    }
  });

  it('protocol mistakes get the SDK\'s JSON-RPC answers (the body reaches it unparsed)', async () => {
    const auth = { authorization: `Bearer ${AGENT}` };
    const garbled = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":',
    });
    expect(garbled.status).toBe(400);
    expect(((await garbled.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const noSession = await rawPost(auth);
    expect(noSession.status).toBe(400);
    await noSession.body?.cancel();
    const get = await fetch(`${base}/mcp`, { headers: { ...auth, accept: 'text/event-stream' } });
    expect(get.status).toBe(400);
    await get.body?.cancel();
  });
});
