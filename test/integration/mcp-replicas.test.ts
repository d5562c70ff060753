import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { echoTool } from '../helpers/app.js';
import { TestNginx } from '../helpers/nginx.js';
import { EVERYTHING } from '../helpers/processes.js';
import { TestRedis } from '../helpers/redis.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { untilAsync } from '../helpers/wait.js';

const ALICE = 'replica-alice-key-0001';
const BOB = 'replica-bob-key-0002';
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1.0.0' } } };
const LIST = { jsonrpc: '2.0', id: 2, method: 'tools/list' };

interface Served {
  method: string;
  upstream: string;
  status: number;
  lastEventId: string | null;
}

/** Polls until `cond` holds (events from other processes: a reload, a reconnect). */
const waitFor = (cond: () => boolean, timeoutMs = 5000) => untilAsync(async () => cond(), 'condition', timeoutMs);

const textOf = (r: unknown) => ((r as { content: { text: string }[] }).content[0]?.text ?? '');

/** Two gateway processes sharing a real redis-server, behind a real nginx doing plain round robin. */
describe('/mcp 2025 sessions on any replica (Redis, nginx round robin, no stickiness)', () => {
  let redis: TestRedis;
  let nginx: TestNginx;
  let replicas: ServerProcess[] = [];
  let toolsDir: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    redis = await TestRedis.start();
    toolsDir = mkdtempSync(join(tmpdir(), 'toolgate-replicas-tools-'));
    writeFileSync(join(toolsDir, 'echo.yaml'), stringify(echoTool('debug.echo')));
    // Each replica runs its own server-everything (stdio): a subscription lives upstream of the replica that took it.
    writeFileSync(join(toolsDir, 'everything.yaml'), stringify({ kind: 'mcp-server', name: 'every_thing', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], prestart: true, overrides: { 'toggle-subscriber-updates': { confirm: false } } }));
    const config = {
      state: { redis: redis.url },
      tools: { dir: toolsDir, watchDebounceMs: 50 },
      auth: { mode: 'keys', keys: [ALICE, BOB].map((key, i) => ({ id: i === 0 ? 'alice' : 'bob', key, roles: ['agent'], tools: ['*'] })) },
    };
    for (let i = 0; i < 2; i++) replicas.push(await startServerProcess({ config, tools: {}, readyTimeoutMs: 40_000 })); // one after the other: a loaded machine starts each in time
    nginx = await TestNginx.start(replicas.map((r) => r.url));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    for (const r of replicas) if (r.child.exitCode === null) r.child.kill('SIGKILL');
    await nginx?.stop();
    await redis?.stop('SIGTERM');
  });

  const upstreamOf = (r: ServerProcess) => new URL(r.url).host;

  /** The v2 SDK client (a 2025-11-25 session) through nginx; every request it makes is recorded with the replica that served it. */
  async function connect(served: Served[], listChanged: { n: number }): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const client = new Client({ name: 'replicas', version: '1.0.0' });
    client.onerror = () => undefined; // the GET stream's reconnects after a replica dies are reported here
    client.setNotificationHandler('notifications/tools/list_changed', () => void listChanged.n++);
    const transport = new StreamableHTTPClientTransport(new URL(`${nginx.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${ALICE}` } },
      reconnectionOptions: { initialReconnectionDelay: 100, maxReconnectionDelay: 500, reconnectionDelayGrowFactor: 1.5, maxRetries: 30 },
      fetch: async (url, init) => {
        const res = await fetch(url, init);
        const headers = new Headers(init?.headers);
        served.push({ method: init?.method ?? 'GET', upstream: res.headers.get('x-upstream') ?? '', status: res.status, lastEventId: headers.get('last-event-id') });
        return res;
      },
    });
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
  }

  const raw = (base: string, key: string, body: unknown, sessionId?: string, method = 'POST') =>
    fetch(`${base}/mcp`, {
      method,
      headers: { authorization: `Bearer ${key}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': '2025-11-25', ...(sessionId ? { 'mcp-session-id': sessionId } : {}) },
      ...(method === 'POST' ? { body: JSON.stringify(body) } : {}),
    });

  async function rawSession(key: string): Promise<string> {
    const res = await raw(nginx.url, key, INIT);
    await res.text();
    expect(res.status).toBe(200);
    return res.headers.get('mcp-session-id') ?? '';
  }

  /** Each replica directly (no nginx): the status of a tools/list in the session. */
  const statusOnEach = (key: string, id: string) => Promise.all(replicas.filter((r) => r.child.exitCode === null).map(async (r) => {
    const res = await raw(r.url, key, LIST, id);
    const body = await res.text();
    return { status: res.status, body };
  }));

  it('hostile: a forged id, and a real id replayed with another key, are 404 on every replica, with no hint that the session exists', async () => {
    const id = await rawSession(ALICE);
    expect(id).toMatch(/^[A-Za-z0-9_-]{32}$/); // 192 random bits
    for (const r of await statusOnEach(ALICE, id)) expect(r.status).toBe(200);
    const forged = `${id.slice(0, -4)}AAAA`;
    for (const [key, sid] of [[ALICE, forged], [BOB, id]] as const) {
      for (const r of await statusOnEach(key, sid)) {
        expect(r.status).toBe(404);
        expect(JSON.parse(r.body)).toEqual({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
      }
      for (const base of replicas.map((r) => r.url)) {
        const get = await fetch(`${base}/mcp`, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', 'mcp-session-id': sid } });
        expect(get.status).toBe(404);
        await get.text();
        expect((await raw(base, key, undefined, sid, 'DELETE')).status).toBe(404);
      }
    }
    // Bob's replay ended nothing: Alice's session still works on both.
    for (const r of await statusOnEach(ALICE, id)) expect(r.status).toBe(200);
  });

  it('DELETE on one replica ends the session on every replica; a bad Last-Event-ID is a 400', async () => {
    const id = await rawSession(ALICE);
    const bad = await fetch(`${replicas[0]!.url}/mcp`, { headers: { authorization: `Bearer ${ALICE}`, accept: 'text/event-stream', 'mcp-session-id': id, 'last-event-id': '../../etc' } });
    expect(bad.status).toBe(400);
    await bad.text();
    expect((await raw(replicas[1]!.url, ALICE, undefined, id, 'DELETE')).status).toBe(200);
    for (const r of await statusOnEach(ALICE, id)) expect(r.status).toBe(404);
  });

  it('a flood of sessions from one key is bounded across replicas: past 32, its oldest session is gone on every replica', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 34; i++) ids.push(await rawSession(BOB));
    for (const id of ids.slice(0, 2)) for (const r of await statusOnEach(BOB, id)) expect(r.status).toBe(404);
    for (const id of ids.slice(2, 4)) for (const r of await statusOnEach(BOB, id)) expect(r.status).toBe(200);
    // Another key is not touched by Bob's flood.
    const alice = await rawSession(ALICE);
    for (const r of await statusOnEach(ALICE, alice)) expect(r.status).toBe(200);
  });

  it('2026-07-28 requests need nothing: discover, list and call through nginx land on both replicas with no session', async () => {
    const served: Served[] = [];
    const client = new Client({ name: 'replicas-modern', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${nginx.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${ALICE}` } },
      fetch: async (url, init) => {
        const res = await fetch(url, init);
        expect(res.headers.get('mcp-session-id')).toBeNull();
        served.push({ method: init?.method ?? 'GET', upstream: res.headers.get('x-upstream') ?? '', status: res.status, lastEventId: null });
        return res;
      },
    }));
    clients.push(client);
    for (let i = 0; i < 4; i++) {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('debug__echo');
      expect(JSON.parse(textOf(await client.callTool({ name: 'debug.echo', arguments: { i } })))).toEqual({ i });
    }
    expect(new Set(served.map((s) => s.upstream))).toEqual(new Set(replicas.map(upstreamOf)));
  });

  it('a resource subscription taken by one replica is heard on the GET stream the other holds; an unsubscribe that lands on the holder stops it', async () => {
    const served: Served[] = [];
    const { client } = await connect(served, { n: 0 });
    const updates: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri));
    await waitFor(() => served.some((s) => s.method === 'GET' && s.status === 200));
    const holder = served.find((s) => s.method === 'GET' && s.status === 200)!.upstream;
    const uri = (await client.listResources()).resources.find((r) => decodeURIComponent(r.uri).includes('architecture.md'))?.uri ?? '';
    expect(uri).not.toBe('');
    const lastPost = () => served.filter((s) => s.method === 'POST').at(-1)?.upstream;
    for (let i = 0; i < 3 && lastPost() !== holder; i++) await client.ping(); // round robin: the next request goes to the other replica
    await client.subscribeResource({ uri });
    const taker = lastPost()!;
    expect(taker).not.toBe(holder);
    const toggle = (on: string) => fetch(`http://${on}/v1/tools/every_thing.toggle-subscriber-updates/call`, { method: 'POST', headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: {} }) });
    expect((await toggle(taker)).status).toBe(200); // the taker's upstream now sends updates of its subscriptions (every 5 s)
    await waitFor(() => updates.length > 0, 15_000);
    expect(updates[0]).toBe(uri);
    await client.unsubscribeResource({ uri });
    expect(lastPost()).toBe(holder);
    const heard = updates.length;
    await new Promise((r) => setTimeout(r, 5500)); // one more round of the upstream's updates
    expect(updates.length).toBe(heard);
    await toggle(taker);
  }, 40_000);

  it('the v2 SDK client lists, calls and hears tools list_changed once while its requests alternate replicas, and keeps going after the GET stream\'s replica is SIGKILLed', async () => {
    const served: Served[] = [];
    const listChanged = { n: 0 };
    const { client, transport } = await connect(served, listChanged);
    expect(transport.sessionId).toBeDefined();
    await waitFor(() => served.some((s) => s.method === 'GET' && s.status === 200));
    for (let i = 0; i < 6; i++) {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('debug__echo');
      expect(JSON.parse(textOf(await client.callTool({ name: 'debug.echo', arguments: { i } })))).toEqual({ i });
    }
    const posts = served.filter((s) => s.method === 'POST');
    expect(posts.every((s) => s.status === 200 || s.status === 202)).toBe(true);
    expect(new Set(posts.map((s) => s.upstream))).toEqual(new Set(replicas.map(upstreamOf)));

    // Both replicas reload the new file; the client hears it once, on its GET stream.
    writeFileSync(join(toolsDir, 'second.yaml'), stringify(echoTool('debug.second')));
    await waitFor(() => listChanged.n >= 1, 10_000);
    await new Promise((r) => setTimeout(r, 1000));
    expect(listChanged.n).toBe(1);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('debug__second');

    // The replica holding the GET stream dies.
    const holder = served.find((s) => s.method === 'GET' && s.status === 200)!.upstream;
    const dead = replicas.find((r) => upstreamOf(r) === holder)!;
    const survivor = replicas.find((r) => r !== dead)!;
    dead.child.kill('SIGKILL');
    await dead.exited;
    for (let i = 0; i < 4; i++) expect(JSON.parse(textOf(await client.callTool({ name: 'debug.echo', arguments: { after: i } })))).toEqual({ after: i });
    // The stream resumed on the survivor with the last event's id, and a change there still reaches the client.
    await waitFor(() => served.some((s) => s.method === 'GET' && s.status === 200 && s.lastEventId !== null && s.upstream === upstreamOf(survivor)), 10_000);
    writeFileSync(join(toolsDir, 'third.yaml'), stringify(echoTool('debug.third')));
    await waitFor(() => listChanged.n >= 2, 10_000);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('debug__third');
    const after = served.slice(served.findIndex((s) => s.lastEventId !== null));
    expect(after.filter((s) => s.method === 'POST').every((s) => s.upstream.split(', ').pop() === upstreamOf(survivor))).toBe(true);
  }, 60_000);
});
