import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Server } from '@modelcontextprotocol/server';
import type { Caller } from '../../src/auth/caller.js';
import { McpSessions, type SessionLimits } from '../../src/mcp-server/sessions.js';
import { sessionStateOf } from '../../src/mcp-server/session-state.js';
import { RedisSessionStore, sessionHash } from '../../src/mcp-server/session-store.js';
import { TestRedis } from '../helpers/redis.js';

const caller = (id: string): Caller => ({ id, roles: new Set(['agent']), toolPatterns: [/.*/] });
const ALICE = caller('alice');
const BOB = caller('bob');

/** Servers as features see them: the handler reads and changes its session's state (`sessionStateOf`). */
function build(): Server {
  const server = new Server({ name: 'store-test', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', async () => {
    const state = sessionStateOf(server);
    const seen = (state?.get<number>('lists') ?? 0) + 1;
    state?.set('lists', seen);
    state?.subscriptions.add(`test://list/${seen}`);
    await state?.save();
    return { tools: [{ name: `seen_${seen}`, inputSchema: { type: 'object' } }], _meta: { capabilities: server.getClientCapabilities() ?? null, client: server.getClientVersion() ?? null } };
  });
  return server;
}

const post = (sessionId: string | undefined, body: unknown) =>
  new Request('http://localhost/mcp', {
    method: 'POST',
    headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': '2025-11-25', ...(sessionId ? { 'mcp-session-id': sessionId } : {}) },
    body: JSON.stringify(body),
  });

/** The one JSON-RPC message of an SSE answer. */
async function message(res: Response): Promise<Record<string, unknown>> {
  const data = (await res.text()).split('\n').find((l) => l.startsWith('data: {'));
  return JSON.parse(data?.slice(6) ?? '{}') as Record<string, unknown>;
}

const INIT = { protocolVersion: '2025-11-25', capabilities: { elicitation: { form: {} }, roots: {} }, clientInfo: { name: 'remembered-client', version: '9.9.9' } };

/** Two "replicas" in one process (each its own sessions and Redis connections), one real redis-server. */
describe('shared 2025 sessions: state, bounds and expiry in Redis', () => {
  let redis: TestRedis;
  const made: McpSessions[] = [];
  const extra: TestRedis[] = [];

  beforeAll(async () => {
    redis = await TestRedis.start();
  });
  afterAll(async () => {
    for (const s of made) {
      await s.closeAll();
      await s.store?.close();
    }
    for (const r of [redis, ...extra]) await r?.stop('SIGTERM');
  });

  const replica = (limits: Partial<SessionLimits> = {}, url = redis.url) => {
    const l = { perCaller: 32, idleMs: 60_000, max: 1000, ...limits };
    const s = new McpSessions(build, l, new RedisSessionStore(url, l.idleMs));
    made.push(s);
    return s;
  };

  async function open(on: McpSessions, who: Caller): Promise<string> {
    const { transport, settle } = await on.open(who, INIT);
    const res = await transport.handleRequest(post(undefined, { jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT }));
    expect(await settle()).toBe('ok');
    await res.text();
    return transport.sessionId ?? '';
  }

  const list = async (on: McpSessions, id: string, who = ALICE) => {
    const s = await on.resolve(id, who);
    if (!s) return undefined;
    return (await message(await s.transport.handleRequest(post(id, { jsonrpc: '2.0', id: 7, method: 'tools/list' }))))['result'] as { tools: { name: string }[]; _meta: Record<string, unknown> };
  };

  it('a session opened on A is rebuilt on B with the client\'s capabilities and info; slots and subscriptions written on one replica are read on the other', async () => {
    const a = replica();
    const b = replica();
    const id = await open(a, ALICE);
    expect((await list(a, id))?.tools[0]?.name).toBe('seen_1');
    const onB = await list(b, id); // B never saw the initialize
    expect(onB?.tools[0]?.name).toBe('seen_2');
    expect(onB?._meta).toEqual({ capabilities: INIT.capabilities, client: INIT.clientInfo });
    expect((await list(a, id))?.tools[0]?.name).toBe('seen_3'); // A's cached copy took B's write
    const state = (await b.resolve(id, ALICE))?.state;
    expect([...(state?.subscriptions ?? [])]).toEqual(['test://list/1', 'test://list/2', 'test://list/3']);
    // Another key finds nothing on either replica, and its attempt changes nothing.
    expect(await b.resolve(id, BOB)).toBeUndefined();
    expect(await a.resolve(id, BOB)).toBeUndefined();
    expect((await list(b, id))?.tools[0]?.name).toBe('seen_4');
  });

  it('the global bound refuses a new session past `max` (every replica counts), and an idle session expires everywhere', async () => {
    const own = await TestRedis.start(); // the earlier sessions count against `max` in the shared one
    extra.push(own);
    const a = replica({ max: 2, idleMs: 400 }, own.url);
    const b = replica({ max: 2, idleMs: 400 }, own.url);
    const first = await open(a, ALICE);
    await open(b, BOB);
    const { transport, settle } = await a.open(ALICE, INIT);
    await (await transport.handleRequest(post(undefined, { jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT }))).text();
    expect(await settle()).toBe('full');
    expect(await b.resolve(transport.sessionId ?? '', ALICE)).toBeUndefined();
    // No request for longer than idleMs: gone on both, and there is room again.
    await new Promise((r) => setTimeout(r, 700));
    expect(await a.resolve(first, ALICE)).toBeUndefined();
    expect(await b.resolve(first, ALICE)).toBeUndefined();
    expect(await open(b, ALICE)).toHaveLength(32);
  });

  it('server-initiated messages of a session are kept for Last-Event-ID in order, readable from any replica', async () => {
    const a = replica();
    const id = await open(a, ALICE);
    const s = await a.resolve(id, ALICE);
    await s?.server.sendToolListChanged();
    await s?.server.sendToolListChanged();
    const store = a.store!;
    const events = await store.eventsAfter(sessionHash(id), '0-0');
    expect(events.map((e) => (e.message as { method: string }).method)).toEqual(['notifications/tools/list_changed', 'notifications/tools/list_changed']);
    expect(await store.eventsAfter(sessionHash(id), events[0]!.id)).toEqual([events[1]]);
  });
});
