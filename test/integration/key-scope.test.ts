import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { echoTool, startGateway, type TestGateway } from '../helpers/app.js';
import { untilAsync } from '../helpers/wait.js';

const KEYS = {
  agent: 'scope-agent-key-0001',
  other: 'scope-other-key-0002',
  weatherApprover: 'scope-weather-approver-0003',
  approver: 'scope-approver-only-0004',
  admin: 'scope-admin-key-0005',
};
const as = (who: keyof typeof KEYS) => ({ authorization: `Bearer ${KEYS[who]}` });
type Text = { type: string; text?: string };

/**
 * Who may do what with a key: an approver's tool scope bounds the confirmations it can read and
 * decide (outside it they do not exist: 404), only agents call tools, and a call's record is its
 * caller's (or an admin's) to read.
 */
describe('key roles and tool scopes', () => {
  let gw: TestGateway;
  let base: string;
  let clock = Date.parse('2030-01-01T00:00:00Z');
  const clients: Client[] = [];

  beforeAll(async () => {
    gw = await startGateway({
      now: () => clock,
      config: {
        confirmations: { ttlSeconds: 60 },
        auth: {
          keys: [
            { id: 'agent-1', key: KEYS.agent, roles: ['agent'] },
            { id: 'agent-2', key: KEYS.other, roles: ['agent'] },
            { id: 'weather-approver', key: KEYS.weatherApprover, roles: ['approver'], tools: ['weather.*'] },
            { id: 'approver', key: KEYS.approver, roles: ['approver'] },
            { id: 'ops', key: KEYS.admin, roles: ['approver', 'admin'] },
          ],
        },
      },
      tools: {
        'weather-delete.yaml': echoTool('weather.delete', { confirm: true }),
        'files-delete.yaml': echoTool('files.delete', { confirm: true }),
        'weather-now.yaml': echoTool('weather.now'),
        'job.yaml': echoTool('jobs.echo', { async: true, result: { maxBytes: 40 } }),
      },
    });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await gw?.close();
  });

  const get = (url: string, who: keyof typeof KEYS) => gw.app.inject({ method: 'GET', url, headers: as(who) });
  const post = (url: string, who: keyof typeof KEYS, payload: unknown = {}) => gw.app.inject({ method: 'POST', url, headers: as(who), payload: payload as Record<string, unknown> });
  async function gated(tool: string): Promise<{ confirmation: { id: string }; callId: string }> {
    const res = await gw.call(tool, { n: Math.random() }, { key: KEYS.agent });
    expect(res.statusCode).toBe(202);
    return res.json();
  }

  it('an approver limited to weather.* cannot read, approve or reject a files.delete confirmation: 404, as if it did not exist', async () => {
    const files = await gated('files.delete');
    const weather = await gated('weather.delete');
    const id = files.confirmation.id;

    const read = await get(`/v1/confirmations/${id}`, 'weatherApprover');
    expect(read.statusCode).toBe(404);
    expect(read.json().error.code).toBe('NOT_FOUND');
    expect(read.body).not.toContain('files.delete');
    const unknown = await get('/v1/confirmations/cf_does_not_exist', 'weatherApprover');
    expect(read.json().error.message.replace(id, 'ID')).toBe(unknown.json().error.message.replace('cf_does_not_exist', 'ID'));
    for (const decision of ['approve', 'reject']) {
      const res = await post(`/v1/confirmations/${id}/${decision}`, 'weatherApprover');
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('NOT_FOUND');
    }
    const listed = (await get('/v1/confirmations', 'weatherApprover')).json().confirmations as { id: string }[];
    expect(listed.map((c) => c.id)).toContain(weather.confirmation.id);
    expect(listed.map((c) => c.id)).not.toContain(id);

    // Within its scope it reads and decides; the files confirmation is still pending for an approver of every tool.
    expect((await get(`/v1/confirmations/${weather.confirmation.id}`, 'weatherApprover')).json()).toMatchObject({ tool: 'weather.delete', status: 'pending' });
    expect((await post(`/v1/confirmations/${weather.confirmation.id}/approve`, 'weatherApprover')).statusCode).toBe(200);
    expect((await get(`/v1/confirmations/${id}`, 'approver')).json()).toMatchObject({ tool: 'files.delete', status: 'pending' });
    expect((await post(`/v1/confirmations/${id}/reject`, 'approver')).statusCode).toBe(200);
  });

  it('an expired confirmation outside the scope is 404 too, not 410', async () => {
    const files = await gated('files.delete');
    clock += 61_000;
    expect((await post(`/v1/confirmations/${files.confirmation.id}/approve`, 'weatherApprover')).statusCode).toBe(404);
    expect((await post(`/v1/confirmations/${files.confirmation.id}/approve`, 'approver')).statusCode).toBe(410);
  });

  it('a key with only the approver role cannot call tools: REST 403, a batch entry FORBIDDEN, each audited; it still lists them', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/v1/tools/weather.now/call', headers: { ...as('approver'), 'x-request-id': 'approver-call' }, payload: { arguments: {} } });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toMatchObject({ code: 'FORBIDDEN', retryable: false });
    expect(res.json().error.message).toContain("'agent' role");
    expect((await gw.audit()).find((r) => r['requestId'] === 'approver-call')).toMatchObject({ caller: 'approver', outcome: 'error', errorCode: 'FORBIDDEN' });
    // No tool name is confirmed or suggested to it by calling.
    const unknown = await post('/v1/tools/weather.nowz/call', 'approver', { arguments: {} });
    expect(unknown.statusCode).toBe(403);
    expect(unknown.body).not.toContain('weather.now\'');

    const batch = await post('/v1/calls', 'approver', { calls: [{ tool: 'weather.now', arguments: {} }, { tool: 'weather.delete', arguments: {} }] });
    expect(batch.statusCode).toBe(200);
    expect(batch.json().results.map((r: { error?: { code: string } }) => r.error?.code)).toEqual(['FORBIDDEN', 'FORBIDDEN']);
    expect((await gw.app.gw.confirmations.pending()).filter((c) => c.caller === 'approver')).toEqual([]);

    const tools = await get('/v1/tools', 'approver');
    expect(tools.statusCode).toBe(200);
    expect(tools.json().tools.map((t: { name: string }) => t.name)).toContain('weather.now');
    expect((await get('/v1/tools/weather.now', 'approver')).statusCode).toBe(200);
    // An agent still calls.
    expect((await gw.call('weather.now', {}, { key: KEYS.agent })).statusCode).toBe(200);
  });

  it('a key with only the approver role cannot call tools over /mcp or /sse either', async () => {
    const auth = as('approver');
    const mcp = new Client({ name: 'scope-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: auth } }));
    clients.push(mcp);
    const sse = new Client({ name: 'scope-test-sse', version: '1.0.0' });
    await sse.connect(
      new SSEClientTransport(new URL(`${base}/sse`), {
        requestInit: { headers: auth },
        eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), ...auth } }) },
      }),
    );
    clients.push(sse);
    for (const client of [mcp, sse]) {
      const out = await client.callTool({ name: 'weather.now', arguments: {} });
      expect(out.isError).toBe(true);
      expect((out.content as Text[]).map((b) => b.text).join('\n')).toContain('agent role');
    }
  });

  it("a call's record, events and kept result are its caller's (and admins'): another agent and approvers get 404", async () => {
    const started = await gw.call('jobs.echo', { text: 'a result longer than forty bytes, so it is kept for paging' }, { key: KEYS.agent });
    expect(started.statusCode).toBe(202);
    const { callId } = started.json() as { callId: string };
    await untilAsync(async () => (await get(`/v1/calls/${callId}`, 'agent')).json().status === 'ok', 'the call to finish');
    const record = (await get(`/v1/calls/${callId}`, 'agent')).json();
    const href = record.response.more.href as string;
    for (const url of [`/v1/calls/${callId}`, `/v1/calls/${callId}/events`, href]) {
      expect((await get(url, 'agent')).statusCode).toBe(200);
      expect((await get(url, 'admin')).statusCode).toBe(200);
      for (const who of ['other', 'approver', 'weatherApprover'] as const) {
        const res = await get(url, who);
        expect(res.statusCode).toBe(404);
        expect(res.json().error.code).toBe('NOT_FOUND');
      }
    }
    // A gated call's record too: the approver decides from the confirmation, not the call.
    const files = await gated('files.delete');
    expect((await get(`/v1/calls/${files.callId}`, 'approver')).statusCode).toBe(404);
    expect((await get(`/v1/calls/${files.callId}`, 'agent')).json().status).toBe('pending_confirmation');
  });
});

describe('the keyless local caller', () => {
  it('still has every role: calls, lists and reads confirmations, approves, reads calls', async () => {
    const gw = await startGateway({ tools: { 'gated.yaml': echoTool('files.delete', { confirm: true }), 'job.yaml': echoTool('jobs.echo', { async: true }) } });
    try {
      const pending = await gw.call('files.delete', { path: '/tmp/x' });
      expect(pending.statusCode).toBe(202);
      const { confirmation, callId } = pending.json() as { confirmation: { id: string }; callId: string };
      expect((await gw.app.inject({ method: 'GET', url: `/v1/confirmations/${confirmation.id}` })).statusCode).toBe(200);
      expect((await gw.app.inject({ method: 'GET', url: '/v1/confirmations' })).json().confirmations).toHaveLength(1);
      expect((await gw.app.inject({ method: 'POST', url: `/v1/confirmations/${confirmation.id}/approve` })).statusCode).toBe(200);
      expect((await gw.app.inject({ method: 'GET', url: `/v1/calls/${callId}` })).json().status).toBe('ok');
      const job = (await gw.call('jobs.echo', {})).json() as { callId: string };
      await untilAsync(async () => (await gw.app.inject({ method: 'GET', url: `/v1/calls/${job.callId}` })).json().status === 'ok', 'the job');
      expect((await gw.app.inject({ method: 'GET', url: '/v1/audit' })).statusCode).toBe(200);
    } finally {
      await gw.close();
    }
  });
});
