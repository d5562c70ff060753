import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpTool, startGateway, type TestGateway } from '../helpers/app.js';
import { EVERYTHING } from '../helpers/processes.js';
import { json, Upstream } from '../helpers/upstream.js';
import { until, untilAsync } from '../helpers/wait.js';

const AGENT = 'agent-key-0123456789';
const OTHER = 'other-key-0123456789';
const ADMIN = 'admin-key-0123456789';
const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const msArgs = { type: 'object', required: ['ms'], properties: { ms: { type: 'integer', minimum: 0 } }, additionalProperties: false };

interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}
function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((f) => f.startsWith('event:'))
    .map((f) => {
      const [ev, data] = f.split('\n');
      return { event: (ev ?? '').slice(7), data: JSON.parse((data ?? '').slice(6)) as Record<string, unknown> };
    });
}

describe('long-running calls, events, cancel and large results', () => {
  let up: Upstream;
  let gw: TestGateway;
  const mcpOut: { method: string; params?: Record<string, unknown> }[] = [];
  // The big result: multi-byte characters, so a page boundary could cut one in half.
  const BIG = Array.from({ length: 120 }, (_, i) => `line ${i} é€😀`).join('\n');

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/big') {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        return void res.end(BIG);
      }
      const ms = Number(url.searchParams.get('ms') ?? 0);
      setTimeout(() => {
        if (!res.destroyed) json(res, 200, { slept: ms });
      }, ms);
    });
    gw = await startGateway({
      config: {
        calls: { progressIntervalMs: 300, leaseSeconds: 2, retentionSeconds: 600 },
        auth: {
          keys: [
            { id: 'agent-1', key: AGENT, roles: ['agent'] },
            { id: 'agent-2', key: OTHER, roles: ['agent'] },
            { id: 'ops', key: ADMIN, roles: ['agent', 'admin'] },
          ],
        },
      },
      mcpTrace: (_server, direction, message) => {
        const m = message as { method?: string; params?: Record<string, unknown> };
        if (direction === 'out' && m.method) mcpOut.push({ method: m.method, ...(m.params ? { params: m.params } : {}) });
      },
      tools: {
        'job.yaml': httpTool('jobs.slow', `${up.url}/slow?ms={{ms}}`, { async: true, inputSchema: msArgs, timeoutMs: 10000 }),
        'plain.yaml': httpTool('jobs.plain', `${up.url}/plain?ms={{ms}}`, { inputSchema: msArgs, timeoutMs: 10000 }),
        'short.yaml': httpTool('jobs.short', `${up.url}/short?ms={{ms}}`, { async: true, inputSchema: msArgs, timeoutMs: 300 }),
        'big.yaml': httpTool('docs.big', `${up.url}/big`, { result: { maxBytes: 100 } }),
        'everything.yaml': {
          kind: 'mcp-server',
          name: 'everything',
          transport: 'stdio',
          command: process.execPath,
          args: [EVERYTHING, 'stdio'],
          prestart: true,
          include: ['trigger-long-running-operation'],
          overrides: { 'trigger-long-running-operation': { async: true, timeoutMs: 20000 } },
        },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    await up?.close();
  });

  const get = (url: string, key = AGENT) => gw.app.inject({ method: 'GET', url, headers: auth(key) });
  const record = async (callId: string, key = AGENT) => (await get(`/v1/calls/${callId}`, key)).json() as Record<string, unknown>;

  it('an async HTTP tool answers 202 at once, runs in the background and ends with the same body as a synchronous call', async () => {
    const res = await gw.call('jobs.slow', { ms: 400 }, { key: AGENT });
    expect(res.statusCode).toBe(202);
    const body = res.json() as { callId: string; status: string; tool: string };
    expect(body).toEqual({ callId: expect.stringMatching(/^c_/), tool: 'jobs.slow', status: 'running' });
    expect(res.headers.location).toBe(`/v1/calls/${body.callId}`);
    expect((await record(body.callId)).status).toBe('running');

    // Events: started now, finished when the call ends (the stream then closes).
    const events = parseSse((await get(`/v1/calls/${body.callId}/events`)).body);
    expect(events.map((e) => e.event)).toEqual(['started', 'finished']);
    expect(events[0]?.data['status']).toBe('running');
    expect(events[1]?.data['status']).toBe('ok');

    const done = await record(body.callId);
    expect(done.status).toBe('ok');
    const sync = (await gw.call('jobs.plain', { ms: 1 }, { key: AGENT })).json() as Record<string, unknown>;
    const response = done['response'] as Record<string, unknown>;
    expect(Object.keys(response).sort()).toEqual(Object.keys(sync).sort());
    expect(response['callId']).toBe(body.callId);
    expect(response['result']).toMatchObject({ content: [{ type: 'text', text: expect.stringContaining('"slept":400') }], isError: false });
    expect(done).not.toHaveProperty('owner');

    const audit = (await gw.audit()).filter((r) => r['callId'] === body.callId);
    expect(audit.map((r) => r['outcome'])).toEqual(['accepted', 'ok']);
  });

  it('Prefer: respond-async runs any tool in the background; bad arguments are refused at once, not accepted', async () => {
    const res = await gw.call('jobs.plain', { ms: 50 }, { key: AGENT, headers: { prefer: 'wait=5, respond-async' } });
    expect(res.statusCode).toBe(202);
    expect(res.headers['preference-applied']).toBe('respond-async');
    const { callId } = res.json() as { callId: string };
    await untilAsync(async () => (await record(callId)).status === 'ok', 'the call to finish');

    const bad = await gw.call('jobs.slow', { ms: 'soon' }, { key: AGENT });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().error.code).toBe('INVALID_ARGUMENTS');
  });

  it('the timeout still applies in the background, and only the caller (or an admin) can read the call', async () => {
    const { callId } = (await gw.call('jobs.short', { ms: 3000 }, { key: AGENT })).json() as { callId: string };
    await untilAsync(async () => (await record(callId)).status === 'error', 'the timeout');
    const rec = await record(callId);
    expect((rec['error'] as { code: string }).code).toBe('TIMEOUT');
    await until(() => up.seen.find((s) => s.url === '/short?ms=3000')?.aborted === true, 'the upstream to see its request aborted');

    expect((await get(`/v1/calls/${callId}`, OTHER)).statusCode).toBe(404);
    expect((await get(`/v1/calls/${callId}`, ADMIN)).statusCode).toBe(200);
  });

  it('DELETE cancels a running HTTP call: the upstream request is aborted and the record says cancelled', async () => {
    const { callId } = (await gw.call('jobs.slow', { ms: 5000 }, { key: AGENT })).json() as { callId: string };
    await until(() => up.seen.some((s) => s.url === '/slow?ms=5000'), 'the upstream to be reached');
    expect((await gw.app.inject({ method: 'DELETE', url: `/v1/calls/${callId}`, headers: auth(OTHER) })).statusCode).toBe(404);

    const del = await gw.app.inject({ method: 'DELETE', url: `/v1/calls/${callId}`, headers: auth(AGENT) });
    expect(del.statusCode).toBe(200);
    expect(del.json()).toMatchObject({ callId, status: 'cancelled', error: { code: 'CANCELLED' } });
    await until(() => up.seen.find((s) => s.url === '/slow?ms=5000')?.aborted === true, 'the upstream to see its request aborted');

    const again = await gw.app.inject({ method: 'DELETE', url: `/v1/calls/${callId}`, headers: auth(AGENT) });
    expect(again.statusCode).toBe(409);
    const audit = (await gw.audit()).filter((r) => r['callId'] === callId);
    expect(audit.at(-1)).toMatchObject({ outcome: 'error', errorCode: 'CANCELLED' });
  });

  it('an async MCP tool streams its progress (throttled) and finishes', async () => {
    const res = await gw.call('everything.trigger-long-running-operation', { duration: 1.5, steps: 10 }, { key: AGENT });
    expect(res.statusCode).toBe(202);
    const { callId } = res.json() as { callId: string };
    const events = parseSse((await get(`/v1/calls/${callId}/events`)).body);
    const progress = events.filter((e) => e.event === 'progress').map((e) => e.data);
    // Ten notifications over 1.5 s, at most one event per 300 ms: the throttle keeps a few, the last wins.
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.length).toBeLessThan(10);
    expect(progress.every((p) => p['total'] === 10)).toBe(true);
    const values = progress.map((p) => p['progress'] as number);
    expect([...values].sort((a, b) => a - b)).toEqual(values);
    expect(events.at(-1)).toMatchObject({ event: 'finished', data: { status: 'ok' } });
    const rec = await record(callId);
    expect(JSON.stringify(rec['response'])).toContain('Long running operation completed');
    expect(rec['progress']).toMatchObject({ total: 10 });
  }, 20_000);

  it('cancelling an async MCP call sends notifications/cancelled to the server', async () => {
    const { callId } = (await gw.call('everything.trigger-long-running-operation', { duration: 10, steps: 5 }, { key: AGENT })).json() as { callId: string };
    await until(() => mcpOut.some((m) => m.method === 'tools/call' && (m.params?.['arguments'] as { duration?: number })?.duration === 10), 'the tools/call');
    const del = await gw.app.inject({ method: 'DELETE', url: `/v1/calls/${callId}`, headers: auth(AGENT) });
    expect(del.json()).toMatchObject({ status: 'cancelled' });
    await until(() => mcpOut.some((m) => m.method === 'notifications/cancelled'), 'notifications/cancelled');
  });

  it('Idempotency-Key on an async call replays the 202 with the same callId, without a second run', async () => {
    const headers = { 'idempotency-key': 'job-42' };
    const first = (await gw.call('jobs.slow', { ms: 120 }, { key: AGENT, headers })).json() as { callId: string };
    const second = await gw.call('jobs.slow', { ms: 120 }, { key: AGENT, headers });
    expect(second.statusCode).toBe(202);
    expect(second.json()).toEqual(first);
    await untilAsync(async () => (await record(first.callId)).status === 'ok', 'the call to finish');
    expect(up.seen.filter((s) => s.url === '/slow?ms=120')).toHaveLength(1);
  });

  it('a batch names an async call by its id instead of a result', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/v1/calls', headers: auth(AGENT), payload: { calls: [{ tool: 'jobs.slow', arguments: { ms: 10 } }] } });
    expect(res.statusCode).toBe(200);
    const [entry] = (res.json() as { results: Record<string, unknown>[] }).results;
    expect(entry).toMatchObject({ tool: 'jobs.slow', status: 'running', callId: expect.stringMatching(/^c_/) });
  });

  it('a result over result.maxBytes carries its first part and a link that pages through the rest', async () => {
    const res = await gw.call('docs.big', {}, { key: AGENT });
    expect(res.statusCode).toBe(200);
    const body = res.json() as { callId: string; result: { content: { text: string }[] }; more: { totalBytes: number; shownBytes: number; href: string } };
    const total = Buffer.byteLength(BIG);
    expect(body.more).toEqual({ totalBytes: total, shownBytes: expect.any(Number), href: `/v1/calls/${body.callId}/result?offset=${body.more.shownBytes}` });
    expect(body.more.shownBytes).toBeLessThanOrEqual(100);
    const shown = BIG.slice(0, Buffer.from(BIG).subarray(0, body.more.shownBytes).toString('utf8').length);
    expect(body.result.content[0]?.text.startsWith(shown)).toBe(true);

    // Follow `next` with a small page size: every page is whole characters, together the full text.
    let text = shown;
    let next: string | undefined = `${body.more.href}&limit=37`;
    let pages = 0;
    while (next) {
      const page = (await get(next)).json() as { text: string; nextOffset: number | null; next?: string; totalBytes: number };
      expect(page.text).not.toContain('\uFFFD');
      expect(Buffer.byteLength(page.text)).toBeLessThanOrEqual(37);
      text += page.text;
      next = page.next ? `${page.next}&limit=37` : undefined;
      pages++;
    }
    expect(text).toBe(BIG);
    expect(pages).toBeGreaterThan(20);

    expect((await get(`/v1/calls/${body.callId}/result`, OTHER)).statusCode).toBe(404);
    expect((await get(`/v1/calls/${body.callId}/result?offset=-1`)).statusCode).toBe(400);
    expect((await get('/v1/calls/c_nothing/result')).statusCode).toBe(404);
  });

  it('a graceful shutdown marks calls still running as interrupted', async () => {
    const other = await startGateway({
      config: { calls: { leaseSeconds: 1 } },
      tools: { 'job.yaml': httpTool('jobs.slow', `${up.url}/slow?ms={{ms}}`, { async: true, inputSchema: msArgs, timeoutMs: 10000 }) },
    });
    const state = other.app.gw.state;
    const { callId } = (await other.call('jobs.slow', { ms: 4000 }, {})).json() as { callId: string };
    await other.app.gw.background.close();
    const rec = await other.app.gw.calls.get(callId);
    expect(rec).toMatchObject({ status: 'interrupted', error: { code: 'INTERRUPTED' } });
    const audit = (await other.audit()).filter((r) => r['callId'] === callId);
    expect(audit.at(-1)).toMatchObject({ outcome: 'error', errorCode: 'INTERRUPTED' });
    expect(state).toBe(other.app.gw.state);
    await other.close();
  });
});
