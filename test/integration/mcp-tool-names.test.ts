import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport as SseV1 } from '@modelcontextprotocol/sdk/client/sse.js';
import { httpTool, startGateway, type TestGateway } from '../helpers/app.js';
import { json, Upstream } from '../helpers/upstream.js';

/**
 * mcp.toolNames over real clients in both eras: /mcp and /sse list the names ?format=openai gives
 * (what OpenAI and Anthropic accept), calls take either form and reach the tool the list showed.
 */
const AGENT = 'names-agent-key-0001';
const NARROW = 'names-narrow-key-0002';
const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const keys = {
  keys: [
    { id: 'agent-1', key: AGENT, roles: ['agent'] },
    { id: 'agent-2', key: NARROW, roles: ['agent'], tools: ['debug.*', 'files.*'] },
  ],
};
const LONG = `${'x'.repeat(30)}.${'y'.repeat(40)}`; // 71 characters: cut and given a hash suffix
/** Provider names: [a-zA-Z0-9_-]{1,64} (OpenAI's FunctionDefinition.name, Anthropic's tool name). */
const PROVIDER_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

type Text = { type: string; text?: string };
const textOf = (r: Record<string, unknown>) => ((r['content'] ?? []) as Text[]).map((b) => b.text ?? '').join('\n');

interface Connected {
  listTools(): Promise<{ tools: { name: string; description?: string }[] }>;
  callTool(p: { name: string; arguments: Record<string, unknown> }): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}
type Kind = 'v2 modern /mcp' | 'v2 2025 /mcp' | 'v1 /mcp' | 'v1 /sse';
const KINDS: Kind[] = ['v2 modern /mcp', 'v2 2025 /mcp', 'v1 /mcp', 'v1 /sse'];

describe('mcp.toolNames: /mcp and /sse name tools as ?format=openai does', () => {
  let up: Upstream;
  let gw: TestGateway;
  const open: Connected[] = [];

  async function connect(g: TestGateway, kind: Kind, key = AGENT): Promise<Connected> {
    const base = `http://127.0.0.1:${(g.app.server.address() as { port: number }).port}`;
    const headers = auth(key);
    let c: Connected;
    if (kind.startsWith('v2')) {
      const client = new ClientV2({ name: 'names-v2', version: '1.0.0' }, kind === 'v2 modern /mcp' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
      await client.connect(new HttpV2(new URL(`${base}/mcp`), { requestInit: { headers } }));
      c = client as unknown as Connected;
    } else {
      const client = new ClientV1({ name: 'names-v1', version: '1.0.0' });
      const transport =
        kind === 'v1 /mcp'
          ? new HttpV1(new URL(`${base}/mcp`), { requestInit: { headers } })
          : new SseV1(new URL(`${base}/sse`), { requestInit: { headers }, eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }) } });
      await client.connect(transport);
      c = client as unknown as Connected;
    }
    open.push(c);
    return c;
  }

  /** The names GET /v1/tools?format=openai gives this key: the mapping /mcp must show. */
  async function openaiNames(g: TestGateway, key = AGENT): Promise<string[]> {
    const res = await g.app.inject({ method: 'GET', url: '/v1/tools?format=openai', headers: auth(key) });
    expect(res.statusCode).toBe(200);
    return (res.json() as { tools: { function: { name: string } }[] }).tools.map((t) => t.function.name).sort();
  }

  /** The upstream path a call reached (each tool has its own), or undefined when none did. */
  async function reached(c: Connected, name: string): Promise<{ path: string | undefined; text: string; isError: boolean }> {
    const before = up.seen.length;
    const r = await c.callTool({ name, arguments: {} });
    return { path: up.seen.slice(before).at(-1)?.url, text: textOf(r), isError: r['isError'] === true };
  }

  const tools = (u: string) => ({
    // debug.echo and debug__echo share the provider name debug__echo: the loader keeps one of them.
    'a-dotted.yaml': httpTool('debug.echo', `${u}/dotted`),
    'b-flat.yaml': httpTool('debug__echo', `${u}/flat`),
    'list.yaml': httpTool('files.list-all', `${u}/list`),
    'long.yaml': httpTool(LONG, `${u}/long`),
    'wipe.yaml': httpTool('ops.wipe', `${u}/wipe`),
  });

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((req, res) => json(res, 200, { path: req.url }));
    gw = await startGateway({ config: { auth: keys }, tools: tools(up.url) });
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await Promise.all(open.map((c) => c.close().catch(() => undefined)));
    await gw?.close();
    await up?.close();
  });

  it('the collision is resolved once, at load: one of debug.echo and debug__echo is served, the other reported', () => {
    const served = gw.app.gw.registry.tools.filter((t) => t.providerName === 'debug__echo');
    expect(served).toHaveLength(1);
    expect(gw.app.gw.registry.problems.some((p) => /clashes/.test(p.message))).toBe(true);
  });

  describe.each(KINDS)('%s', (kind) => {
    it('lists exactly the names of ?format=openai, each one OpenAI and Anthropic accept', async () => {
      const c = await connect(gw, kind);
      const names = (await c.listTools()).tools.map((t) => t.name).sort();
      expect(names).toEqual(await openaiNames(gw));
      expect(names).toContain('files__list-all');
      expect(names.some((n) => n.includes('.'))).toBe(false);
      for (const n of names) expect(n).toMatch(PROVIDER_NAME);
      const narrow = (await (await connect(gw, kind, NARROW)).listTools()).tools.map((t) => t.name).sort();
      expect(narrow).toEqual(await openaiNames(gw, NARROW));
      expect(narrow).not.toContain('ops__wipe');
    });

    it('a call by the listed name and one by the canonical name reach the same tool; audit keeps the canonical name', async () => {
      const c = await connect(gw, kind);
      const listed = (await c.listTools()).tools;
      const long = listed.find((t) => t.description === `http tool ${LONG}`)!;
      expect(long.name).toHaveLength(64);
      for (const [shown, canonicalName, path] of [['files__list-all', 'files.list-all', '/list'], [long.name, LONG, '/long']] as const) {
        const byShown = await reached(c, shown);
        expect(byShown).toMatchObject({ path, isError: false });
        expect((await reached(c, canonicalName)).path).toBe(path);
        const rec = (await gw.audit()).filter((r) => r['event'] === 'call' && r['outcome'] === 'ok').at(-2);
        expect(rec?.['tool']).toBe(canonicalName);
      }
    });

    it('the collision: a call by the shared provider name reaches the tool the list described', async () => {
      const c = await connect(gw, kind);
      const shown = (await c.listTools()).tools.find((t) => t.name === 'debug__echo')!;
      const winner = shown.description === 'http tool debug.echo' ? 'debug.echo' : 'debug__echo';
      const loser = winner === 'debug.echo' ? 'debug__echo' : 'debug.echo';
      const path = winner === 'debug.echo' ? '/dotted' : '/flat';
      expect(shown.description).toBe(`http tool ${winner}`);
      expect((await reached(c, 'debug__echo')).path).toBe(path);
      expect((await reached(c, winner)).path).toBe(path);
      // The refused tool's own canonical name never reaches the refused tool's backend.
      expect((await reached(c, loser)).path).not.toBe(path === '/dotted' ? '/flat' : '/dotted');
    });

    it('hostile names: unknown, differing only in case, hidden from the key: all unknown, nothing sent', async () => {
      const c = await connect(gw, kind);
      for (const name of ['nothere__tool', 'Files__List-All', 'FILES.LIST-ALL', 'files__list_all', 'files____list-all']) {
        const r = await reached(c, name);
        expect(r).toMatchObject({ path: undefined, isError: true });
        expect(r.text).toMatch(new RegExp(`^Error TOOL_NOT_FOUND: There is no tool named '${name.replace(/[.]/g, '\\.')}'`));
      }
      // A close name is suggested as the list shows it.
      expect((await reached(c, 'files__list-al')).text).toContain("'files__list-all'");
      const narrow = await connect(gw, kind, NARROW);
      const unknown = await reached(narrow, 'ops__wipf');
      for (const name of ['ops__wipe', 'ops.wipe']) {
        const r = await reached(narrow, name);
        expect(r).toMatchObject({ path: undefined, isError: true });
        // Word for word what an unknown name gets: the hidden tool's existence does not show.
        expect(r.text).toBe(unknown.text.replace('ops__wipf', name));
        expect(r.text).not.toMatch(/FORBIDDEN|not available/);
      }
    });

  });

  describe.each(KINDS)('mcp.toolNames: canonical, %s', (kind) => {
    let canonical: TestGateway;
    beforeAll(async () => {
      canonical = await startGateway({ config: { auth: keys, mcp: { toolNames: 'canonical' } }, tools: tools(up.url) });
      await canonical.app.listen({ port: 0, host: '127.0.0.1' });
    });
    afterAll(async () => {
      await canonical?.close();
    });

    it('lists the dotted names, and still takes provider names', async () => {
      const c = await connect(canonical, kind);
      const names = (await c.listTools()).tools.map((t) => t.name);
      expect(names).toContain('files.list-all');
      expect(names).toContain(LONG);
      expect((await reached(c, 'files__list-all')).path).toBe('/list');
      expect((await reached(c, 'files.list-all')).path).toBe('/list');
    });
  });
});

describe('mcp.toolNames: provider, in the approval paths', () => {
  let gw: TestGateway;
  let base: string;
  const open: { close(): Promise<void> }[] = [];
  beforeAll(async () => {
    gw = await startGateway({
      config: { auth: keys, mcp: { elicitApproval: { tools: ['files.*'] } } },
      tools: { 'delete.yaml': { name: 'files.delete', description: 'deletes', sideEffect: 'destructive', backends: [{ id: 'b', builtin: 'echo' }] } },
    });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await Promise.all(open.map((c) => c.close().catch(() => undefined)));
    await gw?.close();
  });

  /** A v2 client (pinned to 2026-07-28, or 2025) that answers every approval form with approve: true. */
  async function approving(modern: boolean, asked: string[]) {
    const client = new ClientV2({ name: 'names-approve', version: '1.0.0' }, { ...(modern ? { versionNegotiation: { mode: { pin: '2026-07-28' as const } } } : {}), capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler('elicitation/create', async (req) => {
      asked.push(req.params.message + JSON.stringify(req.params));
      return { action: 'accept', content: { approve: true } };
    });
    await client.connect(new HttpV2(new URL(`${base}/mcp`), { requestInit: { headers: auth(AGENT) } }));
    open.push(client);
    return client;
  }

  it.each([true, false])('modern=%s: a call by the listed name is asked about by that name, approved, run once, audited by the canonical one', async (modern) => {
    const asked: string[] = [];
    const client = await approving(modern, asked);
    const path = `/p-${modern}`;
    const r = (await client.callTool({ name: 'files__delete', arguments: { path } })) as Record<string, unknown>;
    expect(textOf(r), textOf(r)).toBe(JSON.stringify({ path }));
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('files__delete');
    expect(asked[0]).not.toContain('files.delete');
    const ran = (await gw.audit()).filter((a) => a['event'] === 'call' && a['outcome'] === 'ok' && (a['args'] as { path?: string })?.path === path);
    expect(ran).toHaveLength(1);
    expect(ran[0]?.['tool']).toBe('files.delete');
  });

  it('without elicitation the pending text names the tool as listed', async () => {
    const client = new ClientV1({ name: 'names-pending', version: '1.0.0' });
    await client.connect(new HttpV1(new URL(`${base}/mcp`), { requestInit: { headers: auth(AGENT) } }));
    open.push(client);
    const text = textOf((await client.callTool({ name: 'files.delete', arguments: { path: '/q' } })) as Record<string, unknown>);
    expect(text).toMatch(/^Not run yet: this call of 'files__delete' needs a person's approval/);
  });
});
