import { afterEach, describe, expect, it } from 'vitest';
import { echoTool, startGateway, type TestGateway } from '../helpers/app.js';
import { rawMcpSession } from '../helpers/mcp-raw.js';

// 2025 /mcp sessions stay bounded (issue 28, point 3): an idle one is closed after
// mcp.sessions.idleSeconds, one with an open GET stream is kept; past mcp.sessions.max an
// initialize is refused (503 + Retry-After) and no open session is evicted for it, except a
// caller's own least recently used one when that caller is at mcp.sessions.perCaller.

const K1 = 'k-evict-one-0123456789';
const K2 = 'k-evict-two-0123456789';
const keys = { keys: [{ id: 'one', key: K1 }, { id: 'two', key: K2 }] };

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

async function listening(sessions: Record<string, number>): Promise<string> {
  gw = await startGateway({ tools: { 'echo.yaml': echoTool('util.echo') }, config: { auth: keys, mcp: { sessions } } });
  return gw.app.listen({ port: 0, host: '127.0.0.1' });
}

type Session = Awaited<ReturnType<typeof rawMcpSession>>;
const listStatus = async (s: Session) => {
  const res = await s.post({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  await res.text();
  return res.status;
};
const initialize = (base: string, key: string) =>
  fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${key}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'flood', version: '1' } } }),
  });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('idle 2025 sessions', () => {
  it('closes a session idle past mcp.sessions.idleSeconds and keeps one with an open GET stream', async () => {
    const base = await listening({ idleSeconds: 1 });
    const idle = await rawMcpSession(base, K1);
    const streaming = await rawMcpSession(base, K1);
    const stream = new AbortController();
    const get = await fetch(`${base}/mcp`, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${K1}`, 'mcp-session-id': streaming.session, 'mcp-protocol-version': '2025-06-18' },
      signal: stream.signal,
    });
    expect(get.status).toBe(200);
    expect(await listStatus(idle)).toBe(200);

    await sleep(2500); // one idle time and a sweep (every idle/2), with room to spare

    const gone = await idle.post({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { error: { code: number } }).error.code).toBe(-32001);
    expect(await listStatus(streaming)).toBe(200);
    stream.abort();
  }, 30_000);
});

describe('a session flood', () => {
  it('refuses initializes past mcp.sessions.max with 503 + Retry-After and keeps every open session', async () => {
    const base = await listening({ max: 5, perCaller: 3 });
    const open = [await rawMcpSession(base, K1), await rawMcpSession(base, K1), await rawMcpSession(base, K1), await rawMcpSession(base, K2), await rawMcpSession(base, K2)];

    for (let i = 0; i < 20; i++) {
      const res = await initialize(base, K2);
      expect(res.status).toBe(503);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(res.headers.get('mcp-session-id')).toBeNull();
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/too many MCP sessions/);
    }
    for (const s of open) expect(await listStatus(s)).toBe(200);

    // A caller at its own bound makes room with its least recently used session: the total stays at the bound.
    await listStatus(open[0]!);
    const fourth = await rawMcpSession(base, K1);
    expect(await listStatus(fourth)).toBe(200);
    expect(await listStatus(open[1]!)).toBe(404);
    expect(await listStatus(open[0]!)).toBe(200);
    expect((await initialize(base, K2)).status).toBe(503);
  }, 30_000);
});
