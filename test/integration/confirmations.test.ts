import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { Upstream, json } from '../helpers/upstream.js';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { until } from '../helpers/wait.js';

const KEYS = { agent: 'k-agent-000001', other: 'k-agent-000002', ops: 'k-ops-0000003', ops2: 'k-ops-0000004', lead: 'k-lead-000005' };
const PLANTED = 'planted-password-XYZZY-31337';
const ENV_SECRET = 'env-secret-token-ABCDEF-987';

/** The whole confirmation life-cycle over HTTP, guards before the gate, and what the audit keeps. */
describe('confirmation gates', () => {
  let up: Upstream;
  let gw: TestGateway;
  let clock = Date.now();
  const hooks: unknown[] = [];
  const hits = (p: string) => up.seen.filter((s) => s.url.startsWith(p)).length;
  const as = (who: keyof typeof KEYS) => ({ authorization: `Bearer ${KEYS[who]}` });
  const approve = (id: string, who: keyof typeof KEYS, note?: string) =>
    gw.app.inject({ method: 'POST', url: `/v1/confirmations/${id}/approve`, headers: as(who), payload: note ? { note } : {} });
  const reject = (id: string, who: keyof typeof KEYS) => gw.app.inject({ method: 'POST', url: `/v1/confirmations/${id}/reject`, headers: as(who), payload: {} });

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((req, res, body) => {
      if (req.url === '/hook') {
        hooks.push(JSON.parse(body));
        return json(res, 204, {});
      }
      json(res, 200, { done: req.url, got: body ? (JSON.parse(body) as unknown) : null });
    });
    gw = await startGateway({
      now: () => clock,
      env: { SECRET_TOKEN: ENV_SECRET },
      config: {
        confirmations: { ttlSeconds: 60, fourEyes: true, webhook: { url: `${up.url}/hook` } },
        auth: {
          keys: [
            { id: 'agent-1', key: KEYS.agent, roles: ['agent'] },
            { id: 'agent-2', key: KEYS.other, roles: ['agent'] },
            { id: 'ops', key: KEYS.ops, roles: ['approver', 'admin'] },
            { id: 'ops-2', key: KEYS.ops2, roles: ['approver'] },
            { id: 'lead', key: KEYS.lead, roles: ['agent', 'approver'] },
          ],
        },
      },
      tools: {
        'delete.yaml': {
          name: 'files.delete',
          description: 'Deletes a file',
          sideEffect: 'destructive',
          redact: ['password'],
          inputSchema: { type: 'object', required: ['path'], properties: { path: { type: 'string' }, password: { type: 'string' } } },
          guards: [{ arg: 'path', pathPrefixes: ['/srv/shared'] }],
          backends: [{ id: 'api', http: { method: 'POST', url: `${up.url}/delete`, body: '{{arguments}}', headers: { 'x-token': '${env:SECRET_TOKEN}' } } }],
        },
        'charge.yaml': {
          name: 'pay.charge',
          description: 'Charges a card',
          sideEffect: 'write',
          confirm: { when: [{ arg: 'amount', gt: 100 }] },
          inputSchema: { type: 'object', required: ['amount'], properties: { amount: { type: 'number' } } },
          backends: [{ id: 'api', http: { method: 'POST', url: `${up.url}/charge`, body: '{{arguments}}' } }],
        },
        'sql.yaml': {
          name: 'db.query',
          description: 'Runs a read-only query',
          sideEffect: 'read',
          inputSchema: { type: 'object', properties: { sql: { type: 'string' } } },
          guards: [{ arg: 'sql', readOnlySql: true }],
          backends: [{ id: 'db', builtin: 'echo' }],
        },
        'fetch.yaml': {
          name: 'web.fetch',
          description: 'Fetches a URL',
          sideEffect: 'read',
          inputSchema: { type: 'object', properties: { url: { type: 'string' } } },
          guards: [{ arg: 'url', urlHosts: [] }],
          backends: [{ id: 'b', builtin: 'echo' }],
        },
      },
    });
  });
  afterAll(async () => {
    await gw.close();
    await up.close();
  });

  let asked = 0;
  async function ask(path = `/srv/shared/file-${++asked}.txt`, who: keyof typeof KEYS = 'agent') {
    const res = await gw.call('files.delete', { path, password: PLANTED }, { headers: as(who), sessionId: 'sess-1' });
    expect(res.statusCode).toBe(202);
    return res.json() as { callId: string; status: string; confirmation: { id: string; expiresAt: string; summary: string } };
  }

  it('pending → listed → approved: the call runs once and its result comes back', async () => {
    const pending = await ask();
    expect(pending.status).toBe('pending_confirmation');
    expect(pending.confirmation.summary).toContain('agent-1');
    expect(pending.confirmation.summary).not.toContain(PLANTED);
    expect(hits('/delete')).toBe(0);

    const state = await gw.app.inject({ method: 'GET', url: `/v1/calls/${pending.callId}`, headers: as('agent') });
    expect(state.json()).toMatchObject({ status: 'pending_confirmation', confirmationId: pending.confirmation.id });

    const list = await gw.app.inject({ method: 'GET', url: '/v1/confirmations?status=pending', headers: as('ops') });
    const listed = list.json().confirmations.find((c: { id: string }) => c.id === pending.confirmation.id);
    expect(listed).toMatchObject({ tool: 'files.delete', caller: 'agent-1', sessionId: 'sess-1', arguments: { path: '/srv/shared/file-1.txt', password: '[REDACTED]' } });

    const res = await approve(pending.confirmation.id, 'ops', 'looks fine');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ callId: pending.callId, status: 'ok', confirmationId: pending.confirmation.id, approver: 'ops' });
    expect(res.json().result.structuredContent.got).toEqual({ path: '/srv/shared/file-1.txt', password: PLANTED });
    expect(hits('/delete')).toBe(1);

    const done = await gw.app.inject({ method: 'GET', url: `/v1/calls/${pending.callId}`, headers: as('agent') });
    expect(done.json()).toMatchObject({ status: 'ok', approver: 'ops', response: { status: 'ok' } });
    const records = (await gw.audit()).filter((r) => r.callId === pending.callId);
    expect(records.map((r) => r.outcome)).toEqual(['pending_confirmation', 'approved', 'ok']);
    expect(records[1]).toMatchObject({ approver: 'ops', confirmationId: pending.confirmation.id, note: 'looks fine' });
    expect(records[2]).toMatchObject({ approver: 'ops', confirmationId: pending.confirmation.id, caller: 'agent-1' });
  });

  it('posts each new pending confirmation to the webhook, without secrets', async () => {
    const pending = await ask();
    await until(() => hooks.some((h) => (h as { id: string }).id === pending.confirmation.id), 'webhook');
    const hook = hooks.find((h) => (h as { id: string }).id === pending.confirmation.id);
    expect(hook).toMatchObject({ event: 'confirmation.pending', tool: 'files.delete', caller: 'agent-1' });
    expect(JSON.stringify(hook)).not.toContain(PLANTED);
  });

  it('reject: the call never runs, and a later approval is a conflict', async () => {
    const pending = await ask();
    const before = hits('/delete');
    const res = await reject(pending.confirmation.id, 'ops');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'rejected', approver: 'ops' });
    expect((await approve(pending.confirmation.id, 'ops2')).statusCode).toBe(409);
    expect(hits('/delete')).toBe(before);
    const state = await gw.app.inject({ method: 'GET', url: `/v1/calls/${pending.callId}`, headers: as('agent') });
    expect(state.json().status).toBe('rejected');
    expect((await gw.audit()).filter((r) => r.callId === pending.callId).map((r) => r.outcome)).toEqual(['pending_confirmation', 'rejected']);
  });

  it('expires after ttlSeconds: 410, audited as expired once', async () => {
    const pending = await ask();
    clock += 61_000;
    try {
      const late = await approve(pending.confirmation.id, 'ops');
      expect(late.statusCode).toBe(410);
      expect(late.json().error.code).toBe('CONFIRMATION_EXPIRED');
      expect((await approve(pending.confirmation.id, 'ops')).statusCode).toBe(410);
      const list = await gw.app.inject({ method: 'GET', url: '/v1/confirmations?status=pending', headers: as('ops') });
      expect(list.json().confirmations.map((c: { id: string }) => c.id)).not.toContain(pending.confirmation.id);
      const expired = (await gw.audit()).filter((r) => r.confirmationId === pending.confirmation.id && r.outcome === 'expired');
      expect(expired).toHaveLength(1);
      const state = await gw.app.inject({ method: 'GET', url: `/v1/calls/${pending.callId}`, headers: as('agent') });
      expect(state.json().status).toBe('expired');
    } finally {
      clock -= 61_000;
    }
  });

  it('the sweeper settles expired confirmations nobody touched', async () => {
    const pending = await ask();
    clock += 61_000;
    try {
      await gw.app.gw.confirmations.sweep();
      const expired = (await gw.audit()).filter((r) => r.confirmationId === pending.confirmation.id && r.outcome === 'expired');
      expect(expired).toHaveLength(1);
    } finally {
      clock -= 61_000;
    }
  });

  it('four-eyes: the caller cannot approve its own call', async () => {
    const pending = await ask('/srv/shared/b.txt', 'lead');
    const own = await approve(pending.confirmation.id, 'lead');
    expect(own.statusCode).toBe(403);
    expect(own.json().error.message).toContain('four-eyes');
    const list = await gw.app.inject({ method: 'GET', url: '/v1/confirmations', headers: as('lead') });
    expect(list.json().confirmations.map((c: { id: string }) => c.id)).not.toContain(pending.confirmation.id);
    expect((await approve(pending.confirmation.id, 'ops')).statusCode).toBe(200);
  });

  it('only approvers decide', async () => {
    const pending = await ask();
    expect((await approve(pending.confirmation.id, 'other')).statusCode).toBe(403);
    expect((await gw.app.inject({ method: 'GET', url: '/v1/confirmations', headers: as('agent') })).statusCode).toBe(403);
    expect((await approve('cf_unknown', 'ops')).statusCode).toBe(404);
    await reject(pending.confirmation.id, 'ops');
  });

  it('two approvals at once: one runs the call, the other gets 409', async () => {
    const pending = await ask('/srv/shared/race.txt');
    const before = hits('/delete');
    const [a, b] = await Promise.all([approve(pending.confirmation.id, 'ops'), approve(pending.confirmation.id, 'ops2')]);
    expect([a.statusCode, b.statusCode].sort()).toEqual([200, 409]);
    expect(hits('/delete')).toBe(before + 1);
  });

  it('a confirm rule asks only above its threshold', async () => {
    const small = await gw.call('pay.charge', { amount: 50 }, { headers: as('agent') });
    expect(small.statusCode).toBe(200);
    const big = await gw.call('pay.charge', { amount: 500 }, { headers: as('agent') });
    expect(big.statusCode).toBe(202);
    expect(big.headers.location).toBe(`/v1/calls/${big.json().callId}`);
  });

  it('another caller cannot read the call', async () => {
    const pending = await ask();
    const res = await gw.app.inject({ method: 'GET', url: `/v1/calls/${pending.callId}`, headers: as('other') });
    expect(res.statusCode).toBe(404);
  });

  describe('argument guards (before the gate)', () => {
    it.each(['/srv/shared/../../etc/passwd', '/srv/shared/%2e%2e/%2e%2e/etc/shadow', '/srv/shared\\..\\..\\x'])('refuses traversal %s', async (path) => {
      const res = await gw.call('files.delete', { path }, { headers: as('agent') });
      expect(res.statusCode).toBe(403);
      expect(res.json().error.code).toBe('FORBIDDEN');
      expect(res.json().error.modelMessage).toContain('/srv/shared');
    });

    it('refuses SQL with a second statement', async () => {
      const bad = await gw.call('db.query', { sql: 'SELECT * FROM users; DROP TABLE users' }, { headers: as('agent') });
      expect(bad.statusCode).toBe(403);
      expect(bad.json().error.modelMessage).toContain('read-only SELECT');
      expect((await gw.call('db.query', { sql: 'SELECT * FROM users' }, { headers: as('agent') })).statusCode).toBe(200);
    });

    it('refuses a URL to the metadata address', async () => {
      const bad = await gw.call('web.fetch', { url: 'http://169.254.169.254/latest/meta-data/iam' }, { headers: as('agent') });
      expect(bad.statusCode).toBe(403);
      expect((await gw.call('web.fetch', { url: 'https://example.com/' }, { headers: as('agent') })).statusCode).toBe(200);
    });
  });

  describe('audit log', () => {
    it('never holds a planted secret, a redacted argument or an API key', async () => {
      await gw.audit();
      const text = readFileSync(gw.auditFile, 'utf8');
      expect(text).toContain('[REDACTED]');
      for (const secret of [PLANTED, ENV_SECRET, ...Object.values(KEYS)]) expect(text).not.toContain(secret);
    });

    it('GET /v1/audit filters by tool, caller, outcome and time, with a cursor (admin only)', async () => {
      const q = (qs: string, who: keyof typeof KEYS = 'ops') => gw.app.inject({ method: 'GET', url: `/v1/audit?${qs}`, headers: as(who) });
      expect((await q('limit=5', 'agent')).statusCode).toBe(403);
      const byTool = (await q('tool=pay.charge')).json();
      expect(byTool.records.length).toBeGreaterThanOrEqual(2);
      expect(byTool.records.every((r: { tool: string }) => r.tool === 'pay.charge')).toBe(true);
      const approvals = (await q('outcome=approved')).json().records;
      expect(approvals.every((r: { outcome: string; approver: string }) => r.outcome === 'approved' && r.approver)).toBe(true);
      const lead = (await q('caller=lead')).json().records;
      expect(lead.length).toBeGreaterThan(0);
      expect(lead.every((r: { caller: string }) => r.caller === 'lead')).toBe(true);
      const future = (await q(`since=${encodeURIComponent(new Date(Date.now() + 3600_000).toISOString())}`)).json();
      expect(future.records).toEqual([]);
      const page1 = (await q('limit=3')).json();
      expect(page1.records).toHaveLength(3);
      const page2 = (await q(`limit=3&cursor=${page1.nextCursor}`)).json();
      expect(page2.records).toHaveLength(3);
      const ids = [...page1.records, ...page2.records].map((r: { id: string }) => r.id);
      expect(new Set(ids).size).toBe(6);
      expect(page1.records[0].ts >= page2.records[0].ts).toBe(true);
      expect((await q('limit=0')).statusCode).toBe(400);
    });
  });
});
