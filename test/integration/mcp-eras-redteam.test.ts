import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoTool, startGateway, type TestGateway } from '../helpers/app.js';
import { parseExposition, sampleValue } from '../helpers/metrics.js';
import { untilAsync } from '../helpers/wait.js';

// Hostile input against /mcp in 2026-07-28 and against the pool (red team, issue 22): each test
// here failed on the code before its fix.

const AGENT = 'red-agent-key-0001';
const OTHER = 'red-other-key-0002';
const ADMIN = 'red-admin-key-0003';
const MODERN = '2026-07-28';
const V = 'io.modelcontextprotocol/protocolVersion';
const envelope = (caps: Record<string, unknown> = {}) => ({ [V]: MODERN, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': caps });
const modernHeaders = (method: string, name?: string) => ({ 'mcp-protocol-version': MODERN, 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}) });
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/mcp/${name}`, import.meta.url));

describe('2026-07-28 subscriptions/listen streams are bounded per key', () => {
  let gw: TestGateway;
  let base: string;
  const opened: AbortController[] = [];

  /** Opens one listen stream (raw fetch); resolves with its status and body once the headers came. */
  const listen = async (key: string, id: number) => {
    const ac = new AbortController();
    opened.push(ac);
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${key}`, ...modernHeaders('subscriptions/listen') },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { _meta: envelope(), notifications: { toolsListChanged: true } } }),
      signal: ac.signal,
    });
    return res;
  };
  /** Reads a stream in the background: its text so far, and whether it has ended. */
  const tap = (res: Response) => {
    const seen = { text: '', ended: false };
    void (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of res.body!) seen.text += decoder.decode(chunk);
      } catch {
        // aborted by the test's clean-up
      }
      seen.ended = true;
    })();
    return seen;
  };

  beforeAll(async () => {
    gw = await startGateway({
      config: { auth: { keys: [{ id: 'agent-1', key: AGENT, roles: ['agent'] }, { id: 'agent-2', key: OTHER, roles: ['agent'] }] } },
      tools: { 'echo.yaml': echoTool('debug.echo') },
    });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    for (const ac of opened) ac.abort();
    await gw.close();
  });

  it('one key opening more than 32 ends its own oldest, and cannot fill the handler so another key is refused', async () => {
    const first = await listen(AGENT, 0);
    expect(first.status).toBe(200);
    const rest: Response[] = [];
    // Past the SDK's limit for the whole handler (1,024): one key must not exhaust it.
    for (let i = 1; i <= 1024; i++) rest.push(await listen(AGENT, i));
    expect(rest.every((r) => r.status === 200)).toBe(true);
    // Another key still gets its stream.
    const other = await listen(OTHER, 1);
    expect(other.status).toBe(200);
    expect(other.headers.get('content-type')).toContain('text/event-stream');
    const theirs = tap(other);
    await untilAsync(async () => theirs.text.includes('notifications/subscriptions/acknowledged'), 'the other key\'s stream acknowledged', 3000);
    // The oldest stream was ended by the 33rd (gracefully: the body ends), the newest is still open.
    const oldest = tap(first);
    const newest = tap(rest.at(-1)!);
    await untilAsync(async () => oldest.ended, 'the oldest stream ended', 3000);
    expect(oldest.text).toContain('notifications/subscriptions/acknowledged');
    // The streams still open hear a reload that changed the tools.
    gw.writeTool('more.yaml', echoTool('debug.more'));
    await gw.app.gw.reload();
    await untilAsync(async () => newest.text.includes('notifications/tools/list_changed') && theirs.text.includes('notifications/tools/list_changed'), 'list_changed heard', 3000);
    expect(newest.ended).toBe(false);
  }, 60000);
});

describe('a hostile upstream MCP server cannot flood or steer lastError', () => {
  let gw: TestGateway;
  const SECRET = 'hunter2-upstream-token-77';
  const view = async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/admin/mcp', headers: { authorization: `Bearer ${ADMIN}` } });
    return res.json<{ servers: { name: string; state: string; lastError: string | null }[] }>().servers;
  };

  beforeAll(async () => {
    const args = (extra: string[]) => ({ transport: 'stdio', command: process.execPath, args: [fixture('hostile-discover-server.mjs'), ...extra], env: { HOSTILE_TOKEN: '${env:HOSTILE_TOKEN}' } });
    gw = await startGateway({
      config: { auth: { keys: [{ id: 'ops', key: ADMIN, roles: ['admin'] }, { id: 'bot', key: AGENT, roles: ['agent'] }] } },
      env: { HOSTILE_TOKEN: SECRET },
      tools: {
        'discover.yaml': { kind: 'mcp-server', name: 'discover', ...args([]), prestart: true },
        'data.yaml': { kind: 'mcp-server', name: 'data', ...args(['--data']), prestart: true },
        'data-call.yaml': { name: 'data.call', description: 'a tool of the hostile server', sideEffect: 'read', timeoutMs: 3000, backends: [{ id: 'mcp', mcp: { server: 'data', tool: 'echo' } }] },
      },
    });
  }, 30000);
  afterAll(() => gw.close());

  it('thousands of long revisions with escapes and its own secret (server/discover, -32022 data): bounded, masked, no control characters', async () => {
    await untilAsync(async () => (await view()).every((s) => s.state === 'failed'), 'both hostile servers failed', 15000);
    for (const s of await view()) {
      expect(s.lastError, s.name).toContain('no common protocol version');
      expect(s.lastError!.length, s.name).toBeLessThanOrEqual(1300);
      expect(s.lastError, s.name).not.toContain(SECRET);
      expect(s.lastError, s.name).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
      expect(s.lastError, s.name).toMatch(/more\)/); // how many revisions were left out
    }
    // A caller's 503 carries the same words: bounded too.
    const res = await gw.call('data.call', { text: 'x' }, { key: AGENT });
    expect(res.statusCode).toBe(503);
    expect(res.body.length).toBeLessThan(4000);
    expect(res.body).not.toContain(SECRET);
    expect(res.body).not.toContain('\\u001b');
    const tool = await gw.app.inject({ method: 'GET', url: '/v1/tools/data.call', headers: { authorization: `Bearer ${AGENT}` } });
    expect(tool.body.length).toBeLessThan(6000);
    expect(tool.body).not.toContain(SECRET);
  }, 30000);
});

describe('an upstream flooding notifications/tools/list_changed', () => {
  let gw: TestGateway;
  let dir = '';
  const listings = (name: string) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8').split('\n').filter(Boolean).length : 0);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-flood-'));
    const server = (name: string, extra: string[], more: Record<string, unknown> = {}) => ({
      kind: 'mcp-server', name, transport: 'stdio', command: process.execPath, args: [fixture('flood-server.mjs'), ...extra], env: { COUNT: join(dir, name) }, prestart: true, ...more,
    });
    gw = await startGateway({
      config: { auth: { keys: [{ id: 'bot', key: AGENT, roles: ['agent'] }] } },
      tools: { 'same.yaml': server('same', []), 'flip.yaml': server('flip', ['--alternate'], { trustChanges: true }) },
    });
  }, 30000);
  afterAll(() => gw.close());

  it('is re-imported at most about twice a second, not in a tight loop (listings, generations, audit records)', async () => {
    const before = { same: listings('same'), flip: listings('flip'), generation: gw.app.gw.registry.generation };
    const changedBefore = (await gw.audit()).filter((r) => r['action'] === 'tool-changed').length;
    for (const tool of ['same.echo', 'flip.echo']) expect((await gw.call(tool, { flood: true }, { key: AGENT })).statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, 2000));
    // 2 s of a thousand notifications a second: one import at once, then one per 500 ms.
    expect(listings('same') - before.same).toBeLessThanOrEqual(7);
    expect(listings('flip') - before.flip).toBeLessThanOrEqual(7);
    expect(listings('flip') - before.flip).toBeGreaterThanOrEqual(2); // still re-imported: a change is not lost
    expect(gw.app.gw.registry.generation - before.generation).toBeLessThanOrEqual(8);
    const changed = (await gw.audit()).filter((r) => r['action'] === 'tool-changed').length - changedBefore;
    expect(changed).toBeLessThanOrEqual(8);
    expect((await gw.call('same.echo', {}, { key: AGENT })).statusCode).toBe(200);
  }, 20000);
});

describe('2026-07-28 approval through the input request: hostile answers', () => {
  let gw: TestGateway;
  let base: string;
  const post = async (body: unknown, headers: Record<string, string>) => {
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${AGENT}`, ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(5000),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { result?: Record<string, unknown>; error?: { code: number } };
  };
  const caps = { elicitation: { form: {} } };
  const gated = async (): Promise<string> => {
    const first = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'files.delete', arguments: { path: '/x' }, _meta: envelope(caps) } }, modernHeaders('tools/call', 'files.delete'));
    expect(first.result).toMatchObject({ resultType: 'input_required' });
    return first.result?.['requestState'] as string;
  };
  const answer = (state: string, approve: unknown) =>
    post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'files.delete', arguments: { path: '/x' }, requestState: state, inputResponses: { approve: { action: 'accept', ...(approve === undefined ? {} : { content: { approve } }) } }, _meta: envelope(caps) } }, modernHeaders('tools/call', 'files.delete'));

  beforeAll(async () => {
    gw = await startGateway({
      config: { auth: { keys: [{ id: 'agent-1', key: AGENT, roles: ['agent'] }] }, mcp: { elicitApproval: { tools: ['files.*'] } } },
      tools: { 'delete.yaml': { ...echoTool('files.delete'), sideEffect: 'destructive' } },
    });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => gw.close());

  it('an accepted form whose box is not a boolean ("true", 1, none) is asked again, not taken for a decline; the call stays pending', async () => {
    const state = await gated();
    const id = state.replace(/^tg1\./, '');
    for (const approve of ['true', 1, 'yes', undefined]) {
      const again = await answer(state, approve);
      expect(again.result, JSON.stringify(approve)).toMatchObject({ resultType: 'input_required', requestState: state });
      expect((await gw.app.gw.confirmations.get(id))?.status).toBe('pending');
    }
    // The proper answer then decides it, and the call runs once.
    expect((await answer(state, true)).result).toMatchObject({ resultType: 'complete', isError: false });
    expect((await gw.app.gw.confirmations.get(id))?.status).toBe('approved');
    const runs = (await gw.audit()).filter((r) => r['event'] === 'call' && r['outcome'] === 'ok' && r['confirmationId'] === id);
    expect(runs).toHaveLength(1);
  });
});

/** A gateway with one key and one echo tool, listening on 127.0.0.1 (for raw HTTP). */
async function listeningEchoGateway(): Promise<{ gw: TestGateway; base: string }> {
  const gw = await startGateway({ config: { auth: { keys: [{ id: 'agent-1', key: AGENT, roles: ['agent'] }] } }, tools: { 'echo.yaml': echoTool('debug.echo') } });
  return { gw, base: await gw.app.listen({ port: 0, host: '127.0.0.1' }) };
}

describe('toolgate_mcp_protocol_errors_total says why', () => {
  let gw: TestGateway;
  let base: string;
  beforeAll(async () => {
    ({ gw, base } = await listeningEchoGateway());
  });
  afterAll(() => gw.close());

  it('a 2026-07-28 request for a method /mcp does not serve (404 -32601) is method_not_found, not a missing session', async () => {
    const count = async (reason: string) => sampleValue(parseExposition((await gw.app.gw.metrics.exposition()).text), 'toolgate_mcp_protocol_errors_total', { reason }) ?? 0;
    const before = { missing: await count('session_not_found'), method: await count('method_not_found') };
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${AGENT}`, ...modernHeaders('roots/list') },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'roots/list', params: { _meta: envelope() } }),
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32601);
    expect(await count('session_not_found')).toBe(before.missing);
    expect(await count('method_not_found')).toBe(before.method + 1);
  });
});

describe('the JSON fast paths take only what the SDK takes as JSON', () => {
  let gw: TestGateway;
  let base: string;
  beforeAll(async () => {
    ({ gw, base } = await listeningEchoGateway());
  });
  afterAll(() => gw.close());

  it('a tools/call sent as text/plain (naming application/json in a parameter) is 415 in both eras and runs nothing', async () => {
    const { rawMcpSession } = await import('../helpers/mcp-raw.js');
    const { session } = await rawMcpSession(base, AGENT);
    const call = (text: string, _meta?: Record<string, unknown>) => JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'debug.echo', arguments: { text }, ...(_meta ? { _meta } : {}) } });
    const send = (body: string, headers: Record<string, string>) =>
      fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'text/plain; x="application/json"', accept: 'application/json, text/event-stream', authorization: `Bearer ${AGENT}`, ...headers }, body, signal: AbortSignal.timeout(5000) });
    const modern = await send(call('plain-modern', envelope()), modernHeaders('tools/call', 'debug.echo'));
    expect(modern.status).toBe(415);
    await modern.text();
    const legacy = await send(call('plain-legacy'), { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' });
    expect(legacy.status).toBe(415);
    await legacy.text();
    const ran = (await gw.audit()).filter((r) => r['tool'] === 'debug.echo' && JSON.stringify(r['args']).includes('plain-'));
    expect(ran).toHaveLength(0);
  });
});

describe('an upstream whose server/discover offers 2026-07-28 but that answers as a 2025 server', () => {
  let gw: TestGateway;
  let dir = '';
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-liar-'));
    gw = await startGateway({
      config: { auth: { keys: [{ id: 'ops', key: ADMIN, roles: ['admin'] }, { id: 'bot', key: AGENT, roles: ['agent'] }] } },
      tools: { 'liar.yaml': { kind: 'mcp-server', name: 'liar', transport: 'stdio', command: process.execPath, args: [fixture('liar-server.mjs'), '--mode', 'claims'], env: { LOG: join(dir, 'liar.log') } } },
    });
  }, 30000);
  afterAll(() => gw.close());

  it('is connected with initialize after its first Modern answer fails, instead of being probed and dropped in a loop', async () => {
    const view = async () => (await gw.app.inject({ method: 'GET', url: '/admin/mcp', headers: { authorization: `Bearer ${ADMIN}` } })).json<{ servers: { state: string; protocolVersion: string | null; restarts: number }[] }>().servers[0]!;
    await untilAsync(async () => (await view()).state === 'up' && (await view()).protocolVersion === '2025-11-25', 'liar up at 2025-11-25', 5000);
    expect((await view()).restarts).toBeLessThanOrEqual(1);
    const methods = readFileSync(join(dir, 'liar.log'), 'utf8').split('\n').filter(Boolean);
    expect(methods.filter((m) => m === 'server/discover')).toHaveLength(1);
    expect(methods).toContain('initialize');
    await untilAsync(async () => (await gw.call('liar.echo', {}, { key: AGENT })).statusCode === 200, 'liar.echo callable', 5000);
  });
});

describe('an HTTP MCP upstream answering with an endless message', () => {
  let gw: TestGateway;
  const servers: Server[] = [];
  /** The most one answer carried before the gateway stopped reading it. */
  let most = 0;
  const CAP = 300 * 1024 * 1024; // what the test server sends at most in all (the old code held all of it)
  let total = 0;

  /** A server answering every POST with `head` and then `chunk` until the client stops reading (or CAP). */
  async function serve(type: string, head: string, chunk: Buffer, counts: boolean): Promise<number> {
    const srv = createServer((req, res) => {
      req.resume();
      if (req.method !== 'POST') return void res.writeHead(405).end();
      res.writeHead(200, { 'content-type': type });
      res.write(head);
      let mine = 0;
      const pump = () => {
        while (total < CAP && !res.destroyed) {
          total += chunk.length;
          mine += chunk.length;
          if (counts) most = Math.max(most, mine);
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    servers.push(srv);
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    return (srv.address() as { port: number }).port;
  }

  beforeAll(async () => {
    const json = await serve('application/json', '{"jsonrpc":"2.0","id":0,"result":{"x":"', Buffer.alloc(1 << 20, 0x61), true);
    gw = await startGateway({
      config: { auth: { keys: [{ id: 'ops', key: ADMIN, roles: ['admin'] }] } },
      tools: { 'json.yaml': { kind: 'mcp-server', name: 'json', transport: 'streamable-http', url: `http://127.0.0.1:${json}/mcp` } },
    });
  }, 60000);
  afterAll(async () => {
    await gw.close();
    for (const srv of servers) {
      srv.closeAllConnections();
      srv.close();
    }
  });

  it('a JSON answer is cut at 10 MiB, saying so, instead of held in memory whole', async () => {
    const view = async () => (await gw.app.inject({ method: 'GET', url: '/admin/mcp', headers: { authorization: `Bearer ${ADMIN}` } })).json<{ servers: { lastError: string | null }[] }>().servers[0]!;
    await untilAsync(async () => /larger than 10485760 bytes/.test((await view()).lastError ?? ''), 'the too large message named', 10000);
    // The gateway stopped reading soon after the bound (socket buffers aside), on every try.
    expect(most).toBeLessThan(40 * 1024 * 1024);
  });

  it('an SSE stream is bounded per event: a long stream of small events passes, one endless event is cut', async () => {
    const { boundedFetch } = await import('../../src/mcp/bounded-fetch.js');
    // 64 events of 1 MiB each (64 MiB in all, CR LF line ends), then the stream ends.
    const event = Buffer.from(`event: message\r\ndata: ${'b'.repeat((1 << 20) - 40)}\r\n\r\n`);
    let events = 0;
    const many = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const pump = () => {
        while (events < 64) {
          events++;
          if (!res.write(event)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    servers.push(many);
    await new Promise<void>((resolve) => many.listen(0, '127.0.0.1', resolve));
    const manyRes = await boundedFetch()(`http://127.0.0.1:${(many.address() as { port: number }).port}/`, { method: 'POST' });
    let bytes = 0;
    for await (const chunk of manyRes.body!) bytes += (chunk as Uint8Array).length;
    expect(bytes).toBe(64 * event.length);

    most = 0;
    const endless = await serve('text/event-stream', 'event: message\ndata: ', Buffer.alloc(1 << 20, 0x63), true);
    const res = await boundedFetch()(`http://127.0.0.1:${endless}/`, { method: 'POST' });
    const read = (async () => {
      for await (const chunk of res.body!) void chunk;
    })();
    await expect(read).rejects.toThrow(/larger than 10485760 bytes/);
    expect(most).toBeLessThan(40 * 1024 * 1024);
  }, 30000);
});

describe('an upstream answering tools/call with a JSON-RPC error of megabytes', () => {
  let gw: TestGateway;
  let base: string;
  const SECRET = 'hunter2-big-error-secret';
  beforeAll(async () => {
    gw = await startGateway({
      config: { auth: { keys: [{ id: 'bot', key: AGENT, roles: ['agent'] }] } },
      env: { HOSTILE_TOKEN: SECRET },
      tools: { 'big.yaml': { kind: 'mcp-server', name: 'big', transport: 'stdio', command: process.execPath, args: [fixture('liar-server.mjs'), '--mode', 'bigerror'], env: { HOSTILE_TOKEN: '${env:HOSTILE_TOKEN}' }, prestart: true } },
    });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  }, 30000);
  afterAll(() => gw.close());

  it("is cut like a tool's error text (REST body, /mcp result), masked, not passed on whole", async () => {
    const res = await gw.call('big.echo', {}, { key: AGENT });
    expect(res.statusCode).toBe(502);
    expect(res.body.length).toBeLessThan(20_000);
    expect(res.body).not.toContain(SECRET);
    const mcp = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${AGENT}`, ...modernHeaders('tools/call', 'big.echo') },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'big.echo', arguments: {}, _meta: envelope() } }),
    });
    const text = await mcp.text();
    expect(text.length).toBeLessThan(20_000);
    expect(text).toContain('UPSTREAM_ERROR');
    expect(text).not.toContain(SECRET);
  });
});

describe('/sse: a client that posts calls and never reads its stream', () => {
  let gw: TestGateway;
  let base: string;
  beforeAll(async () => {
    gw = await startGateway({
      config: { auth: { keys: [{ id: 'agent-1', key: AGENT, roles: ['agent'] }] }, server: { bodyLimitBytes: 2_000_000 } },
      tools: { 'echo.yaml': echoTool('debug.echo', { result: { maxBytes: 5_000_000 } }) },
    });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => gw.close());

  it('has its stream ended once 16 MiB of answers wait unread (then 404), instead of the gateway holding them all', async () => {
    const port = Number(new URL(base).port);
    const sock = connect(port, '127.0.0.1');
    let head = '';
    sock.write(`GET /sse HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${AGENT}\r\nAccept: text/event-stream\r\n\r\n`);
    // Read until the endpoint event, then never again (the socket's buffer fills, then the kernel's).
    while (!head.includes('sessionId=')) {
      await new Promise((resolve) => sock.once('readable', resolve));
      for (let c = sock.read() as Buffer | null; c !== null; c = sock.read() as Buffer | null) head += c.toString();
    }
    const sid = /sessionId=([A-Za-z0-9_-]+)/.exec(head)![1];
    const text = 'z'.repeat(900_000);
    let refusedAt = -1;
    // 100 answers of about 1.8 MB each (distinct arguments: no loop detection), 180 MB in all.
    for (let i = 0; i < 100 && refusedAt < 0; i++) {
      const res = await fetch(`${base}/messages?sessionId=${sid}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${AGENT}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'debug.echo', arguments: { text: `${text}${i}` } } }),
      });
      await res.text();
      if (res.status === 404) refusedAt = i;
      else expect(res.status).toBe(202);
      await new Promise((resolve) => setTimeout(resolve, 5)); // let the call answer
    }
    sock.destroy();
    // Ended after some 16 MiB (plus the kernel's buffers), long before all 100.
    expect(refusedAt).toBeGreaterThan(0);
    expect(refusedAt).toBeLessThan(50);
  }, 60000);
});
