import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as ClientV2, SSEClientTransport as SseV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport as SseV1 } from '@modelcontextprotocol/sdk/client/sse.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { echoTool, httpTool, startGateway, type TestGateway } from '../helpers/app.js';
import { json, Upstream } from '../helpers/upstream.js';
import { untilAsync } from '../helpers/wait.js';
import { TestRedis } from '../helpers/redis.js';

const AGENT = 'eras-agent-key-0001';
const NARROW = 'eras-narrow-key-0002';
const keys = {
  keys: [
    { id: 'agent-1', key: AGENT, roles: ['agent'] },
    { id: 'agent-2', key: NARROW, roles: ['agent'], tools: ['debug.*'] },
  ],
};
const tools = {
  'echo.yaml': echoTool('debug.echo'),
  'delete.yaml': { ...echoTool('files.delete'), sideEffect: 'destructive' },
  'wipe.yaml': { ...echoTool('ops.wipe'), sideEffect: 'destructive' },
};
// Canonical names listed (mcp.toolNames): the provider names are mcp-tool-names*.test.ts's subject.
const config = (extra: Record<string, unknown> = {}) => ({ auth: keys, mcp: { toolNames: 'canonical', elicitApproval: { tools: ['files.*'] } }, ...extra });

type Text = { type: string; text?: string };
const textOf = (r: Record<string, unknown>) => ((r['content'] ?? []) as Text[]).map((b) => b.text ?? '').join('\n');
const confirmationIn = (text: string) => /confirmation (cf_[A-Za-z0-9_-]+)/.exec(text)?.[1];
const auth = (key: string) => ({ authorization: `Bearer ${key}` });

type Mode = 'modern' | 'auto' | 'legacy';
const negotiation = (mode: Mode) => (mode === 'modern' ? { mode: { pin: '2026-07-28' as const } } : mode === 'auto' ? { mode: 'auto' as const } : undefined);

/** What each era's client answers an approval form with. */
type Answer = { action: 'accept'; content: { approve: boolean } } | { action: 'decline' };

interface Connected {
  listTools(): Promise<{ tools: { name: string }[] }>;
  callTool(p: { name: string; arguments: Record<string, unknown> }): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

describe('/mcp and /sse in both protocol eras, with real clients', () => {
  let gw: TestGateway;
  let base: string;
  let up: Upstream;
  const open: Connected[] = [];
  /** Upstream requests of net.held, until their connection closes. */
  const heldOpen = new Set<object>();

  /** The v2 client in a negotiation mode; with `answer`, it declares elicitation and answers every form so. */
  async function v2(mode: Mode, o: { key?: string; answer?: Answer; asked?: string[]; url?: string; fetch?: typeof fetch } = {}) {
    const negotiated = negotiation(mode);
    const client = new ClientV2({ name: 'eras-v2', version: '1.0.0' }, { ...(negotiated ? { versionNegotiation: negotiated } : {}), capabilities: o.answer ? { elicitation: { form: {} } } : {} });
    const answer = o.answer;
    if (answer) {
      client.setRequestHandler('elicitation/create', async (req) => {
        o.asked?.push(req.params.message);
        return answer;
      });
    }
    const transport = new HttpV2(new URL(o.url ?? `${base}/mcp`), { requestInit: { headers: auth(o.key ?? AGENT) }, ...(o.fetch ? { fetch: o.fetch } : {}) });
    await client.connect(transport);
    open.push(client as unknown as Connected);
    return { client, transport };
  }

  /** The 1.x SDK client over Streamable HTTP (/mcp) or the legacy SSE transport (/sse). */
  async function v1(over: 'mcp' | 'sse', o: { key?: string; answer?: Answer; asked?: string[] } = {}) {
    const client = new ClientV1({ name: 'eras-v1', version: '1.0.0' }, { capabilities: o.answer ? { elicitation: {} } : {} });
    const answer = o.answer;
    if (answer) {
      client.setRequestHandler(ElicitRequestSchema, async (req) => {
        o.asked?.push(req.params.message);
        return answer;
      });
    }
    const headers = auth(o.key ?? AGENT);
    const transport =
      over === 'mcp'
        ? new HttpV1(new URL(`${base}/mcp`), { requestInit: { headers } })
        : new SseV1(new URL(`${base}/sse`), { requestInit: { headers }, eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }) } });
    await client.connect(transport);
    open.push(client as unknown as Connected);
    return { client, transport };
  }

  const lastAudit = async (pred: (r: Record<string, unknown>) => boolean, g: TestGateway = gw) => (await g.audit()).filter(pred).at(-1);

  /** The same three checks for every client: per-key list, an audited call, a gated call approved by the client's user and one left pending. */
  async function exercise(c: Connected, narrow: Connected, approving: Connected, asked: string[], expectSession: boolean) {
    expect((await c.listTools()).tools.map((t) => t.name).sort()).toEqual(['debug.echo', 'files.delete', 'net.held', 'ops.wipe']);
    expect((await narrow.listTools()).tools.map((t) => t.name)).toEqual(['debug.echo']);
    expect(textOf(await narrow.callTool({ name: 'files.delete', arguments: {} }))).toMatch(/^Error TOOL_NOT_FOUND/); // not listed to it: unknown

    const marker = `m-${Math.random().toString(36).slice(2)}`;
    const res = await c.callTool({ name: 'debug.echo', arguments: { marker } });
    expect(res['isError']).toBe(false);
    expect(JSON.parse(textOf(res))).toEqual({ marker });
    const rec = await lastAudit((r) => r['tool'] === 'debug.echo' && r['outcome'] === 'ok');
    expect(rec).toMatchObject({ event: 'call', caller: 'agent-1' });
    if (expectSession) expect(rec?.['sessionId']).toMatch(/^mcp:[0-9a-f]{16}$/);
    else expect(rec?.['sessionId']).toBeUndefined(); // Modern has no session, and none is invented

    // No elicitation: the result names the pending confirmation.
    const pending = await c.callTool({ name: 'files.delete', arguments: { path: `/p-${marker}` } });
    expect(pending['isError']).toBe(false);
    const pid = confirmationIn(textOf(pending));
    expect((await gw.app.gw.confirmations.get(pid!))?.status).toBe('pending');

    // The client's user approves: the call runs once, audited with the MCP client's user as approver.
    const before = asked.length;
    const approved = await approving.callTool({ name: 'files.delete', arguments: { path: `/a-${marker}` } });
    expect(asked.length).toBe(before + 1);
    expect(asked.at(-1)).toMatch(/files\.delete/);
    expect(approved['isError']).toBe(false);
    expect(JSON.parse(textOf(approved))).toEqual({ path: `/a-${marker}` });
    const decision = await lastAudit((r) => r['event'] === 'confirmation' && r['outcome'] === 'approved');
    expect(decision).toMatchObject({ tool: 'files.delete', caller: 'agent-1', approver: 'mcp-session:agent-1' });
    const ran = await lastAudit((r) => r['event'] === 'call' && r['confirmationId'] === decision?.['confirmationId'] && r['outcome'] === 'ok');
    expect(ran).toMatchObject({ approver: 'mcp-session:agent-1' });

    // A tool not opened to client approval stays pending even for a client that could be asked.
    const wipe = await approving.callTool({ name: 'ops.wipe', arguments: {} });
    expect(asked.length).toBe(before + 1);
    expect((await gw.app.gw.confirmations.get(confirmationIn(textOf(wipe))!))?.status).toBe('pending');
  }

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((req, res) => {
      heldOpen.add(req);
      res.on('close', () => heldOpen.delete(req)); // never answered: only the gateway giving up ends it
    });
    gw = await startGateway({ config: config(), tools: { ...tools, 'held.yaml': httpTool('net.held', `${up.url}/held`, { timeoutMs: 30_000 }) } });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all(open.map((c) => c.close().catch(() => undefined)));
    await up.close();
  });

  it('v2 client pinned to 2026-07-28: connects (server/discover), lists per key, calls, approves through the input-required round trip', async () => {
    const asked: string[] = [];
    const { client } = await v2('modern');
    expect(client.getProtocolEra()).toBe('modern');
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const narrow = await v2('modern', { key: NARROW });
    const approving = await v2('modern', { answer: { action: 'accept', content: { approve: true } }, asked });
    await exercise(client as unknown as Connected, narrow.client as unknown as Connected, approving.client as unknown as Connected, asked, false);
    const decision = await lastAudit((r) => r['event'] === 'confirmation' && r['outcome'] === 'approved');
    expect(decision?.['note']).toMatch(/input request/);
  });

  it('2026-07-28: the user declining the form rejects the confirmation; the call never runs', async () => {
    const { client } = await v2('modern', { answer: { action: 'decline' } });
    const res = await client.callTool({ name: 'files.delete', arguments: { path: '/declined' } });
    expect(res.isError).toBe(true);
    const conf = await gw.app.gw.confirmations.get(confirmationIn(textOf(res))!);
    expect(conf).toMatchObject({ status: 'rejected', approver: 'mcp-session:agent-1' });
    expect((await gw.audit()).some((r) => r['event'] === 'call' && r['outcome'] === 'ok' && r['confirmationId'] === conf?.id)).toBe(false);
  });

  it('v2 client in auto mode lands on 2026-07-28 and works the same', async () => {
    const asked: string[] = [];
    const { client } = await v2('auto');
    expect(client.getProtocolEra()).toBe('modern');
    const narrow = await v2('auto', { key: NARROW });
    const approving = await v2('auto', { answer: { action: 'accept', content: { approve: true } }, asked });
    await exercise(client as unknown as Connected, narrow.client as unknown as Connected, approving.client as unknown as Connected, asked, false);
  });

  it('v2 client in legacy mode: a 2025 session beside Modern ones on the same /mcp, approval by elicitation', async () => {
    const asked: string[] = [];
    const { client, transport } = await v2('legacy');
    expect(client.getProtocolEra()).toBe('legacy');
    expect(transport.sessionId).toMatch(/^[A-Za-z0-9_-]{32,}$/);
    const narrow = await v2('legacy', { key: NARROW });
    const approving = await v2('legacy', { answer: { action: 'accept', content: { approve: true } }, asked });
    await exercise(client as unknown as Connected, narrow.client as unknown as Connected, approving.client as unknown as Connected, asked, true);
    // The same endpoint, the same key, the other era at once.
    const modern = await v2('modern');
    expect((await modern.client.listTools()).tools).toHaveLength(4);
    expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
  });

  it('1.x SDK client over /mcp (2025-11-25 session), beside a Modern client', async () => {
    const asked: string[] = [];
    const { client, transport } = await v1('mcp');
    expect((transport as HttpV1).protocolVersion).toBe('2025-11-25');
    const narrow = await v1('mcp', { key: NARROW });
    const approving = await v1('mcp', { answer: { action: 'accept', content: { approve: true } }, asked });
    await exercise(client as unknown as Connected, narrow.client as unknown as Connected, approving.client as unknown as Connected, asked, true);
    const modern = await v2('modern', { key: NARROW });
    expect((await modern.client.listTools()).tools.map((t) => t.name)).toEqual(['debug.echo']);
  });

  it('1.x SDK client over /sse (2024-11-05 transport), and the v2 client\'s SSE transport too', async () => {
    const asked: string[] = [];
    const { client } = await v1('sse');
    const narrow = await v1('sse', { key: NARROW });
    const approving = await v1('sse', { answer: { action: 'accept', content: { approve: true } }, asked });
    await exercise(client as unknown as Connected, narrow.client as unknown as Connected, approving.client as unknown as Connected, asked, true);
    // The v2 client keeps an SSE transport: it reaches /sse as well, and /mcp's Modern leg at once.
    const sse2 = new ClientV2({ name: 'eras-v2-sse', version: '1.0.0' });
    await sse2.connect(new SseV2(new URL(`${base}/sse`), { requestInit: { headers: auth(AGENT) }, eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), ...auth(AGENT) } }) } }));
    open.push(sse2 as unknown as Connected);
    expect((await sse2.listTools()).tools).toHaveLength(4);
    const modern = await v2('modern');
    expect(JSON.parse(textOf(await modern.client.callTool({ name: 'debug.echo', arguments: { via: 'modern' } })))).toEqual({ via: 'modern' });
  });

  it('2026-07-28 under the same gates: 401 without a key, 403 for a foreign Origin, 503 while draining, the nesting limit', async () => {
    const V = 'io.modelcontextprotocol/protocolVersion';
    const discover = { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: { [V]: '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } } };
    const send = (headers: Record<string, string>, body: unknown = discover) =>
      fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover', ...headers },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(5000),
      });
    expect((await send(auth(AGENT))).status).toBe(200);
    expect((await send({})).status).toBe(401);
    expect((await send({ ...auth(AGENT), origin: 'http://evil.example' })).status).toBe(403);
    let deep: unknown = 'x';
    for (let i = 0; i < 1100; i++) deep = { d: deep };
    const nested = await send(auth(AGENT), { ...discover, params: { ...discover.params, extra: deep } });
    expect(nested.status).toBe(400);
    expect(((await nested.json()) as { error: { code: number } }).error.code).toBe(-32600);
    const { client } = await v2('modern');
    gw.app.gw.draining = true;
    try {
      expect((await send(auth(AGENT))).status).toBe(503);
      await expect(client.callTool({ name: 'debug.echo', arguments: {} })).rejects.toThrow();
    } finally {
      gw.app.gw.draining = false;
    }
    expect((await client.callTool({ name: 'debug.echo', arguments: { after: 1 } })).isError).toBe(false);
  });

  it('2026-07-28: closing the request cancels the call and its upstream request, on the JSON path and through the SDK (a progress token)', async () => {
    const V = 'io.modelcontextprotocol/protocolVersion';
    for (const [n, extra] of [[1, {}], [2, { progressToken: 'p-2' }]] as const) {
      const ac = new AbortController();
      const meta = { [V]: '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {}, ...extra };
      const pending = fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { ...auth(AGENT), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'net.held' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'net.held', arguments: { n }, _meta: meta } }),
        signal: ac.signal,
      }).then((r) => r.text()).catch(() => undefined);
      await untilAsync(async () => heldOpen.size === 1, 'the upstream request');
      ac.abort();
      await pending;
      await untilAsync(async () => heldOpen.size === 0, 'the upstream request to be cancelled');
      await untilAsync(async () => (await gw.audit()).some((r) => r['tool'] === 'net.held' && r['outcome'] === 'error' && JSON.stringify(r['args']) === JSON.stringify({ n })), 'the cancelled call\'s audit record');
    }
  });

  it('a reload that changes the tools reaches Modern subscriptions/listen streams and 2025 sessions alike', async () => {
    const { client } = await v2('modern');
    let modernHeard!: () => void;
    const modernNotified = new Promise<void>((r) => (modernHeard = r));
    client.setNotificationHandler('notifications/tools/list_changed', async () => modernHeard());
    const sub = await client.listen({ toolsListChanged: true });
    expect(sub.honoredFilter).toMatchObject({ toolsListChanged: true });

    const legacy = await v1('mcp');
    let legacyHeard!: () => void;
    const legacyNotified = new Promise<void>((r) => (legacyHeard = r));
    const { ToolListChangedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
    legacy.client.setNotificationHandler(ToolListChangedNotificationSchema, async () => legacyHeard());
    await new Promise((r) => setTimeout(r, 200)); // the 1.x client's GET stream opens after initialize

    gw.writeTool('fresh.yaml', echoTool('debug.fresh'));
    await gw.app.gw.reload();
    await Promise.all([modernNotified, legacyNotified]);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('debug.fresh');
    // The stream stays open: closing the gateway (afterAll) must end it, not wait on it.
  });
});

describe('2026-07-28 requests on two replicas sharing Redis state', () => {
  let redis: TestRedis;
  const gws: TestGateway[] = [];
  const bases: string[] = [];
  const clients: ClientV2[] = [];

  beforeAll(async () => {
    redis = await TestRedis.start();
    for (let i = 0; i < 2; i++) {
      const g = await startGateway({ config: config({ state: { redis: redis.url } }), tools });
      gws.push(g);
      bases.push(await g.app.listen({ port: 0, host: '127.0.0.1' }));
    }
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await Promise.all(gws.map((g) => g.close()));
    await redis?.stop('SIGTERM');
  });

  /** A round-robin balancer with no affinity: each request goes to the next replica. */
  function balancer(served: number[]): typeof fetch {
    let next = 0;
    return (input, init) => {
      const i = next++ % 2;
      served.push(i);
      const url = new URL(input instanceof Request ? input.url : String(input));
      const target = new URL(bases[i]!);
      url.host = target.host;
      return fetch(url, init);
    };
  }

  it('discover, list and call land on either replica with no session; the gated round trip starts on one and is answered on the other', async () => {
    const served: number[] = [];
    const asked: string[] = [];
    const client = new ClientV2({ name: 'eras-lb', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler('elicitation/create', async (req) => {
      asked.push(req.params.message);
      return { action: 'accept', content: { approve: true } };
    });
    await client.connect(new HttpV2(new URL(`${bases[0]}/mcp`), { requestInit: { headers: auth(AGENT) }, fetch: balancer(served) }));
    clients.push(client);
    expect(client.getProtocolEra()).toBe('modern');
    for (let i = 0; i < 2; i++) expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['debug.echo', 'files.delete', 'ops.wipe']);
    for (let i = 0; i < 2; i++) expect(JSON.parse(textOf(await client.callTool({ name: 'debug.echo', arguments: { n: i } })))).toEqual({ n: i });
    expect(new Set(served)).toEqual(new Set([0, 1]));

    const start = served.length;
    const res = await client.callTool({ name: 'files.delete', arguments: { path: '/across' } });
    expect(asked).toHaveLength(1);
    expect(JSON.parse(textOf(res))).toEqual({ path: '/across' });
    // The first round (confirmation opened) and the retry (decided, run) went to different replicas.
    const [first, retry] = served.slice(start);
    expect(first).not.toBe(retry);
    const audits = await Promise.all(gws.map((g) => g.audit()));
    const opened = audits[first!]!.find((r) => r['event'] === 'call' && r['outcome'] === 'pending_confirmation' && r['tool'] === 'files.delete');
    expect(opened).toBeDefined();
    const ran = audits[retry!]!.find((r) => r['event'] === 'call' && r['outcome'] === 'ok' && r['tool'] === 'files.delete');
    expect(ran).toMatchObject({ approver: 'mcp-session:agent-1', confirmationId: opened?.['confirmationId'] });
  });
});

describe('2026-07-28 plain tools/call answered as JSON straight from the pipeline (no tool approvable by the client)', () => {
  let gw: TestGateway;
  let up: Upstream;
  let base: string;
  const held: (() => void)[] = [];
  const V = 'io.modelcontextprotocol/protocolVersion';
  const envelope = (extra: Record<string, unknown> = {}) => ({ [V]: '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {}, ...extra });
  const call = (name: string, meta: Record<string, unknown>, headers: Record<string, string> = {}) =>
    fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...auth(AGENT), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name, ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name, arguments: {}, _meta: meta } }),
      signal: AbortSignal.timeout(10_000),
    });

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((req, res) => {
      if (req.url === '/late') return; // never answers: the deadline must end the call
      held.push(() => json(res, 200, { released: true }));
    });
    gw = await startGateway({
      config: { auth: keys },
      tools: { 'echo.yaml': echoTool('debug.echo'), 'held.yaml': httpTool('debug.held', `${up.url}/held`), 'late.yaml': httpTool('debug.late', `${up.url}/late`, { timeoutMs: 300 }) },
    });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    for (const release of held.splice(0)) release();
    await gw.close();
    await up.close();
  });

  it('the real client gets its result; the answer\'s status and headers go out before the tool finishes, its body when it does', async () => {
    const client = new ClientV2({ name: 'eras-fast', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new HttpV2(new URL(`${base}/mcp`), { requestInit: { headers: auth(AGENT) } }));
    expect(JSON.parse(textOf(await client.callTool({ name: 'debug.echo', arguments: { fast: 1 } })))).toEqual({ fast: 1 });
    const rec = (await gw.audit()).find((r) => r['tool'] === 'debug.echo' && r['outcome'] === 'ok');
    expect(rec).toMatchObject({ caller: 'agent-1' });
    expect(rec?.['sessionId']).toBeUndefined();
    await client.close();

    const res = await call('debug.held', envelope()); // resolves on the head, while the upstream still holds the call
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.headers.get('mcp-session-id')).toBeNull();
    await untilAsync(async () => held.length === 1);
    held.shift()?.();
    const body = (await res.json()) as { id: number; result: Record<string, unknown> };
    expect(body).toMatchObject({ id: 9, result: { isError: false, resultType: 'complete', _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'toolgate' } } } });
  });

  it('the JSON path skips none of the SDK\'s checks: a bad envelope is -32602, an Mcp-Name that is not the body\'s -32020', async () => {
    const bad = await call('debug.echo', { [V]: '2026-07-28' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: number } }).error.code).toBe(-32602);
    const other = await call('debug.echo', envelope(), { 'mcp-name': 'debug.held' });
    expect(other.status).toBe(400);
    expect(((await other.json()) as { error: { code: number } }).error.code).toBe(-32020);
    expect(held).toHaveLength(0); // debug.held never ran
  });

  it('the deadline holds for a Modern call: a tool past its timeoutMs is a TIMEOUT result, audited', async () => {
    const client = new ClientV2({ name: 'eras-late', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new HttpV2(new URL(`${base}/mcp`), { requestInit: { headers: auth(AGENT) } }));
    const res = await client.callTool({ name: 'debug.late', arguments: {} });
    expect(res.isError).toBe(true);
    expect(textOf(res)).toMatch(/^Error TIMEOUT/);
    expect((await gw.audit()).find((r) => r['tool'] === 'debug.late')).toMatchObject({ outcome: 'error', caller: 'agent-1' });
    await client.close();
  });
});
