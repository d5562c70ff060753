import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import { createLogger } from '../../src/logger.js';
import { echoTool, startGateway, type TestGateway } from '../helpers/app.js';
import { TestIssuer } from '../helpers/issuer.js';
import { lineSink } from '../helpers/log-lines.js';
import { Upstream } from '../helpers/upstream.js';
import { untilAsync } from '../helpers/wait.js';

const PUBLIC = 'https://toolgate.test';
const METADATA = `${PUBLIC}/.well-known/oauth-protected-resource`;
const ADMIN_KEY = 'identity-admin-key-0001';
/** An API key whose id equals a token subject: not the same person. */
const ALICE_KEY = 'identity-alice-key-0002';

const TOOLS = {
  'echo.yaml': echoTool('debug.echo'),
  'wipe.yaml': { ...echoTool('ops.wipe', { description: 'wipe a volume' }), sideEffect: 'destructive' },
};

const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
const mcpPost = (gw: TestGateway, token: string) =>
  gw.app.inject({ method: 'POST', url: '/mcp', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, payload: init });

/**
 * Identity through a real gateway and real tokens: the 401/403 challenges, the audit record, a
 * confirmation asked for by a token caller and decided by another (four-eyes by subject), and the
 * token never written down.
 */
describe('token callers: challenges, audit, confirmations', () => {
  let idp: TestIssuer;
  /** A second issuer whose caller id is the client: one person (sub) reaches the gateway through two clients. */
  let idp2: TestIssuer;
  /** An issuer whose keys cannot be fetched. */
  let down: TestIssuer;
  let gw: TestGateway;
  let hook: Upstream;
  const lines: string[] = [];
  const tokens: string[] = [];
  const mint = async (i: TestIssuer, claims: Record<string, unknown>, expiresIn?: number) => {
    const t = await i.mint(claims, expiresIn === undefined ? {} : { expiresIn });
    tokens.push(t);
    return t;
  };
  const user = (sub: string, extra: Record<string, unknown> = {}) => mint(idp, { sub, client_id: 'app-1', scope: 'openid toolgate', tools: ['*'], ...extra });

  beforeAll(async () => {
    idp = await TestIssuer.start({ audience: PUBLIC });
    idp2 = await TestIssuer.start({ audience: PUBLIC });
    hook = await new Upstream().start();
    down = await TestIssuer.start({ audience: PUBLIC });
    down.jwksMode = 'down';
    gw = await startGateway({
      tools: TOOLS,
      logger: createLogger('info', new Set(), lineSink(lines)),
      config: {
        server: { publicUrl: PUBLIC },
        confirmations: { webhook: { url: `${hook.url}/pending` } },
        auth: {
          keys: [
            { id: 'admin', key: ADMIN_KEY, roles: ['admin', 'approver'] },
            { id: 'alice', key: ALICE_KEY, roles: ['approver'] },
          ],
          oidc: [
            { issuer: idp.url, requiredScopes: ['toolgate'], scopePrefixes: { roles: 'role:' }, clockSkewSeconds: 5 },
            { issuer: idp2.url, claims: { id: 'client_id' }, defaultTools: ['*'], clockSkewSeconds: 5 },
            { issuer: down.url, jwksUri: down.jwksUri, fetchTimeoutMs: 500 },
          ],
        },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await idp?.close();
    await idp2?.close();
    await hook?.close();
    await down?.close();
  });

  it('tokens for the resource as clients ask for it are accepted by default: publicUrl, with a trailing slash, and <publicUrl>/mcp', async () => {
    for (const aud of [PUBLIC, `${PUBLIC}/`, `${PUBLIC}/mcp`]) {
      const res = await gw.app.inject({ method: 'GET', url: '/v1/tools', headers: { authorization: `Bearer ${await user('aud-check', { aud })}` } });
      expect(res.statusCode, aud).toBe(200);
    }
    const other = await gw.app.inject({ method: 'GET', url: '/v1/tools', headers: { authorization: `Bearer ${await user('aud-check', { aud: 'https://other.test' })}` } });
    expect(other.statusCode).toBe(401);
  });

  it('an expired token on /mcp: 401 invalid_token naming the metadata, the token nowhere in the answer', async () => {
    const token = await mint(idp, { sub: 'expired-user', scope: 'toolgate' }, -120);
    const res = await mcpPost(gw, token);
    expect(res.statusCode).toBe(401);
    const h = String(res.headers['www-authenticate']);
    expect(h).toMatch(/^Bearer resource_metadata="https:\/\/toolgate\.test\/\.well-known\/oauth-protected-resource", error="invalid_token", error_description="access token refused: the token has expired/);
    expect(h + res.body).not.toContain(token);
    expect(h + res.body).not.toContain(token.split('.')[2]);
  });

  it('a token the issuer cannot check now (keys unavailable): 401 with a description but no invalid_token, so the client keeps it', async () => {
    const res = await mcpPost(gw, await mint(down, { sub: 'hal' }));
    expect(res.statusCode).toBe(401);
    expect(res.json().error.details[0].reason).toBe('issuer_unavailable');
    const h = String(res.headers['www-authenticate']);
    expect(h).toMatch(/^Bearer resource_metadata="[^"]+", error_description="access token refused/);
    expect(h).not.toContain('invalid_token');
  });

  it('a refused token whose claims try to forge the challenge: one resource_metadata (ours), no quote or line break from the token', async () => {
    const forged = 'evil", error="insufficient_scope", resource_metadata="https://evil.example/prm\r\nX-Injected: 1';
    const token = await mint(idp, { iss: forged, sub: 'mallory', scope: 'toolgate' });
    const res = await gw.app.inject({ method: 'GET', url: '/v1/tools', headers: { authorization: `Bearer ${token}` } });
    expect(res.statusCode).toBe(401);
    expect(res.headers['x-injected']).toBeUndefined();
    const h = String(res.headers['www-authenticate']);
    expect(h).not.toMatch(/[\r\n]/);
    expect(h.match(/resource_metadata="/g)).toHaveLength(1);
    expect(h.match(/"/g)?.length).toBe(6); // three quoted values: resource_metadata, error, error_description
    const params = extractWWWAuthenticateParams(new Response(null, { status: 401, headers: { 'www-authenticate': h } }));
    expect(params.resourceMetadataUrl?.href).toBe(METADATA);
    expect(params.error).toBe('invalid_token');
  });

  it('a token without a required scope: 403 FORBIDDEN; on /mcp insufficient_scope naming the scope, REST with toolgate\'s body too', async () => {
    const token = await mint(idp, { sub: 'no-scope', scope: 'openid', tools: ['*'] });
    const mcp = await mcpPost(gw, token);
    expect(mcp.statusCode).toBe(403);
    expect(mcp.headers['www-authenticate']).toMatch(new RegExp(`^Bearer error="insufficient_scope", scope="toolgate", resource_metadata="${METADATA.replace(/[./]/g, '\\$&')}"`));
    const rest = await gw.call('debug.echo', { a: 1 }, { key: token });
    expect(rest.statusCode).toBe(403);
    expect(rest.json()).toMatchObject({ error: { code: 'FORBIDDEN', message: expect.stringMatching(/lacks the scope toolgate/) } });
    expect(rest.headers['www-authenticate']).toContain('error="insufficient_scope", scope="toolgate"');
    const sse = await gw.app.inject({ method: 'GET', url: '/sse', headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
    expect(sse.statusCode).toBe(403);
    // with the scope, the same subject gets in
    expect((await mcpPost(gw, await user('no-scope'))).statusCode).toBe(200);
  });

  it('a token lacking a route\'s role: 403 with the role scope the issuer maps (scopePrefixes.roles)', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/v1/audit', headers: { authorization: `Bearer ${await user('agent-only')}` } });
    expect(res.statusCode).toBe(403);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer error="insufficient_scope", scope="role:admin", resource_metadata=/);
    const admin = await gw.app.inject({ method: 'GET', url: '/v1/audit?limit=1', headers: { authorization: `Bearer ${await user('agent-only', { scope: 'toolgate role:admin' })}` } });
    expect(admin.statusCode).toBe(200);
  });

  it('the audit record of a token call names caller, subject, client and issuer; GET /v1/audit filters by subject', async () => {
    const res = await gw.call('debug.echo', { who: 'dora' }, { key: await user('dora') });
    expect(res.statusCode).toBe(200);
    const rec = (await gw.audit()).find((r) => r['tool'] === 'debug.echo' && (r['args'] as { who?: string })?.who === 'dora');
    expect(rec).toMatchObject({ caller: 'dora', subject: 'dora', clientId: 'app-1', issuer: idp.url, outcome: 'ok' });
    const q = await gw.app.inject({ method: 'GET', url: `/v1/audit?subject=dora&issuer=${encodeURIComponent(idp.url)}`, headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(q.statusCode).toBe(200);
    const found = (q.json() as { records: Record<string, unknown>[] }).records;
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((r) => r['subject'] === 'dora')).toBe(true);
    // an API-key call has none of these fields
    await gw.call('debug.echo', { who: 'key' }, { key: ADMIN_KEY });
    const keyRec = (await gw.audit()).find((r) => (r['args'] as { who?: string })?.who === 'key');
    expect(keyRec).toMatchObject({ caller: 'admin' });
    expect(keyRec).not.toHaveProperty('subject');
  });

  async function ask(token: string, path: string): Promise<string> {
    const res = await gw.call('ops.wipe', { path }, { key: token });
    expect(res.statusCode, res.body).toBe(202);
    return (res.json() as { confirmation: { id: string } }).confirmation.id;
  }
  const decide = (id: string, token: string, how: 'approve' | 'reject' = 'approve'): Promise<LightMyRequestResponse> =>
    gw.app.inject({ method: 'POST', url: `/v1/confirmations/${id}/${how}`, headers: { authorization: `Bearer ${token}` }, payload: {} });

  it('four-eyes by subject: one person through a second client cannot approve its own call; another person, approver by claim, can, and the call runs as its token caller', async () => {
    // idp2's caller id is the client: erin via cli-a asks, erin via cli-b (approver) is another id but the same person
    const asking = await mint(idp2, { sub: 'erin', client_id: 'cli-a', roles: ['agent'] });
    const id = await ask(asking, '/vol/erin');
    const seen = await gw.app.inject({ method: 'GET', url: `/v1/confirmations/${id}`, headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(seen.json()).toMatchObject({ caller: 'cli-a', subject: 'erin', clientId: 'cli-a', issuer: idp2.url });
    await untilAsync(async () => hook.seen.some((r) => r.body.includes(id)));
    expect(JSON.parse(hook.seen.find((r) => r.body.includes(id))?.body ?? '{}')).toMatchObject({ id, caller: 'cli-a', subject: 'erin', issuer: idp2.url });
    const self = await decide(id, await mint(idp2, { sub: 'erin', client_id: 'cli-b', roles: ['approver'] }));
    expect(self.statusCode).toBe(403);
    expect(self.json().error.message).toMatch(/four-eyes: the same person/);

    const frank = await mint(idp2, { sub: 'frank', client_id: 'cli-c', roles: ['approver'] });
    const ok = await decide(id, frank);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ status: 'ok', approver: 'cli-c', result: { isError: false } });
    const recs = (await gw.audit()).filter((r) => r['confirmationId'] === id);
    expect(recs.find((r) => r['outcome'] === 'approved')).toMatchObject({ caller: 'cli-a', subject: 'erin', issuer: idp2.url, approver: 'cli-c', approverSubject: 'frank', approverIssuer: idp2.url });
    expect(recs.find((r) => r['event'] === 'call' && r['outcome'] === 'ok')).toMatchObject({ caller: 'cli-a', subject: 'erin', approver: 'cli-c' });
    // the asker reads its call's result; the approver (another caller) does not
    const callId = (ok.json() as { callId: string }).callId;
    expect((await gw.app.inject({ method: 'GET', url: `/v1/calls/${callId}`, headers: { authorization: `Bearer ${asking}` } })).statusCode).toBe(200);
  });

  it('an API key named like a token caller\'s subject is another person: it may approve that caller\'s call', async () => {
    // (a token whose caller id is a key's id is refused outright; here the id is the client, the subject 'alice')
    const id = await ask(await mint(idp2, { sub: 'alice', client_id: 'cli-z', roles: ['agent'] }), '/vol/alice');
    const res = await decide(id, ALICE_KEY);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'ok', approver: 'alice' });
  });

  it('the same token subject under its one client id cannot approve its own call either', async () => {
    const id = await ask(await user('gina', { roles: ['agent', 'approver'] }), '/vol/gina');
    const res = await decide(id, await user('gina', { roles: ['approver'], client_id: 'other-app' }));
    expect(res.statusCode).toBe(403);
  });

  it('no token appears in a log line, an audit record or a stored confirmation', async () => {
    await gw.app.inject({ method: 'GET', url: '/v1/confirmations', headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    const audit = readFileSync(gw.auditFile, 'utf8');
    const confirmations = (await gw.app.inject({ method: 'GET', url: '/v1/confirmations', headers: { authorization: `Bearer ${ADMIN_KEY}` } })).body;
    const stored = await Promise.all(
      (await gw.audit()).filter((r) => typeof r['confirmationId'] === 'string').map(async (r) => (await gw.app.gw.state.get(`toolgate:conf:${String(r['confirmationId'])}`)) ?? ''),
    );
    expect(tokens.length).toBeGreaterThan(10);
    expect(stored.join('').length).toBeGreaterThan(0);
    for (const t of tokens) {
      const signature = t.split('.')[2] as string;
      const webhook = hook.seen.map((r) => r.body).join('\n');
      for (const [where, text] of [['log', lines.join('\n')], ['audit', audit], ['confirmations', confirmations], ['state', stored.join('\n')], ['webhook', webhook]] as const) {
        expect(text.includes(signature), `a token signature in the ${where}`).toBe(false);
      }
    }
  });
});

describe('token callers: per-caller state keyed by issuer and id', () => {
  let a: TestIssuer;
  let b: TestIssuer;
  const gateways: TestGateway[] = [];

  const start = async (limits: Record<string, unknown>) => {
    const gw = await startGateway({
      tools: TOOLS,
      config: {
        server: { publicUrl: PUBLIC },
        limits,
        auth: {
          keys: [{ id: 'admin', key: ADMIN_KEY, roles: ['admin'] }],
          oidc: [
            { issuer: a.url, defaultTools: ['*'], clockSkewSeconds: 5 },
            { issuer: b.url, defaultTools: ['*'], clockSkewSeconds: 5 },
          ],
        },
      },
    });
    gateways.push(gw);
    return gw;
  };

  beforeAll(async () => {
    a = await TestIssuer.start({ audience: PUBLIC });
    b = await TestIssuer.start({ audience: PUBLIC });
  });
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.close()));
    await a?.close();
    await b?.close();
  });

  it('the same sub from two issuers is two callers to the rate limit', async () => {
    const gw = await start({ rateLimit: { requests: 1, windowSeconds: 60 } });
    const fromA = await a.mint({ sub: 'carol' });
    expect((await gw.call('debug.echo', { n: 1 }, { key: fromA })).statusCode).toBe(200);
    expect((await gw.call('debug.echo', { n: 2 }, { key: await b.mint({ sub: 'carol' }) })).statusCode).toBe(200);
    const again = await gw.call('debug.echo', { n: 3 }, { key: fromA });
    expect(again.statusCode).toBe(429);
    expect(again.json().error.code).toBe('RATE_LIMITED');
  });

  it('an MCP session opened with one issuer\'s token is not found with another issuer\'s token for the same sub', async () => {
    const gw = await start({});
    const headers = (t: string) => ({ authorization: `Bearer ${t}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' });
    const fromA = await a.mint({ sub: 'erin' });
    const opened = await gw.app.inject({ method: 'POST', url: '/mcp', headers: headers(fromA), payload: init });
    expect(opened.statusCode).toBe(200);
    const session = String(opened.headers['mcp-session-id']);
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    const same = await gw.app.inject({ method: 'POST', url: '/mcp', headers: { ...headers(await a.mint({ sub: 'erin' })), 'mcp-session-id': session }, payload: list });
    expect(same.statusCode).toBe(200); // the same caller with a fresh token keeps its session
    const other = await gw.app.inject({ method: 'POST', url: '/mcp', headers: { ...headers(await b.mint({ sub: 'erin' })), 'mcp-session-id': session }, payload: list });
    expect(other.statusCode).toBe(404);
  });

  it('... and to the loop guard: the same call in the same session from the other issuer is not a repeat', async () => {
    const gw = await start({ loopRepeats: 1 });
    const args = { loop: 'x' };
    const fromA = await a.mint({ sub: 'dave' });
    expect((await gw.call('debug.echo', args, { key: fromA, sessionId: 's-1' })).statusCode).toBe(200);
    const other = await gw.call('debug.echo', args, { key: await b.mint({ sub: 'dave' }), sessionId: 's-1' });
    expect(other.statusCode, other.body).toBe(200);
    const repeat = await gw.call('debug.echo', args, { key: fromA, sessionId: 's-1' });
    expect(repeat.statusCode).toBe(429);
    expect(repeat.json().error.code).toBe('LOOP_DETECTED');
  });
});
