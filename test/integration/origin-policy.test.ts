import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { Upstream, json } from '../helpers/upstream.js';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { ConfigError, loadConfig } from '../../src/config/load.js';

/**
 * The one origin policy (SPEC §6) through every route family of a gateway under inject: bound
 * (configured) to 127.0.0.1:18080, so its own origins are http://127.0.0.1:18080 and http://localhost:18080.
 */
const PORT = 18080;
const OWN = `http://127.0.0.1:${PORT}`;
const REBIND = `rebind.attacker.example:${PORT}`;
const EVIL = 'http://evil.example';
const LISTED = 'https://console.example.com';
const MCP_LISTED = 'https://inspector.example.com';
const ADMIN_KEY = 'origin-admin-key-0001';

const tools = (upUrl: string) => ({
  'delete.yaml': {
    name: 'files.delete',
    description: 'Deletes a file (gated: destructive)',
    sideEffect: 'destructive',
    inputSchema: { type: 'object', required: ['path'], properties: { path: { type: 'string' } } },
    backends: [{ id: 'api', http: { method: 'POST', url: `${upUrl}/delete`, body: '{{arguments}}' } }],
  },
  'echo.yaml': { name: 'debug.echo', description: 'echo', sideEffect: 'none', backends: [{ id: 'b', builtin: 'echo' }] },
});

function expectForbidden(res: LightMyRequestResponse, what: string, reason: RegExp): void {
  expect(res.statusCode, `${what}: ${res.body}`).toBe(403);
  const body = res.json() as { error: Record<string, unknown> };
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error).toMatchObject({ code: 'FORBIDDEN', retryable: false });
  expect(typeof body.error['modelMessage']).toBe('string');
  expect(String(body.error['message'])).toMatch(reason);
  expect(res.body).not.toMatch(/\n\s+at |node_modules/); // no stack trace
  expect(res.headers['access-control-allow-origin'], what).toBeUndefined();
}

describe('origin policy: every route, keyless loopback mode', () => {
  let up: Upstream;
  let gw: TestGateway;
  const deletes = () => up.seen.filter((s) => s.url === '/delete').length;
  const inject = (method: string, url: string, headers: Record<string, string> = {}, payload?: unknown) =>
    gw.app.inject({ method: method as 'GET', url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
  async function pending(): Promise<string> {
    const res = await gw.call('files.delete', { path: '/tmp/x' });
    expect(res.statusCode).toBe(202);
    return (res.json() as { confirmation: { id: string } }).confirmation.id;
  }
  const state = async (id: string) => ((await inject('GET', `/v1/confirmations/${id}`)).json() as { status: string }).status;

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((_req, res) => json(res, 200, { deleted: true }));
    gw = await startGateway({
      config: { server: { port: PORT, allowedOrigins: [LISTED] }, mcp: { allowedOrigins: [MCP_LISTED] } },
      tools: tools(up.url),
    });
  });
  afterAll(async () => {
    await gw?.close();
    await up?.close();
  });

  it('a DNS-rebinding Host is 403 FORBIDDEN on every route family, before anything runs, and the approval does not happen', async () => {
    const id = await pending();
    const generation = gw.app.gw.registry.generation;
    const host = { host: REBIND };
    const withBody = { ...host, 'content-type': 'application/json' };
    const attempts: [string, string, Record<string, string>, unknown?][] = [
      ['GET', '/v1/tools', host],
      ['GET', '/v1/tools/debug.echo', host],
      ['POST', '/v1/tools/debug.echo/call', withBody, { arguments: { a: 1 } }],
      ['POST', '/v1/calls', withBody, { calls: [{ tool: 'debug.echo', arguments: {} }] }],
      ['POST', '/v1/route', withBody, { query: 'echo' }],
      ['GET', '/v1/confirmations', host],
      ['GET', `/v1/confirmations/${id}`, host],
      ['POST', `/v1/confirmations/${id}/approve`, withBody, {}],
      ['POST', `/v1/confirmations/${id}/reject`, withBody, {}],
      ['GET', '/v1/audit', host],
      ['GET', '/admin/reload', host],
      ['POST', '/admin/reload', host],
      ['GET', '/metrics', host],
      ['GET', '/healthz', host],
      ['GET', '/readyz', host],
      ['GET', '/openapi.json', host],
      ['GET', '/docs', host],
      ['GET', '/console', host],
      ['GET', '/console/app.js', host],
      ['POST', '/mcp', { ...withBody, accept: 'application/json, text/event-stream' }, { jsonrpc: '2.0', id: 1, method: 'tools/list' }],
      ['GET', '/sse', host],
      ['POST', '/messages?sessionId=x', withBody, {}],
      ['GET', '/no/such/route', host],
      ['OPTIONS', '/v1/tools', { ...host, origin: EVIL, 'access-control-request-method': 'POST' }],
      // Malformed JSON: refused before the body is parsed, so the answer is 403, not 400.
      ['POST', '/v1/tools/debug.echo/call', withBody, '{not json'],
    ];
    for (const [method, url, headers, payload] of attempts) {
      expectForbidden(await inject(method, url, headers, payload), `${method} ${url}`, /Host 'rebind\.attacker\.example:18080' is not a loopback name/);
    }
    expect(await state(id)).toBe('pending');
    expect(deletes()).toBe(0);
    expect(gw.app.gw.registry.generation).toBe(generation);
    const audit = await gw.audit();
    expect(audit.filter((r) => r.confirmationId === id).map((r) => r.outcome)).toEqual(['pending_confirmation']);
    // The same requests with a loopback Host are served (the 403 was the Host's doing).
    expect((await inject('GET', '/v1/tools', { host: `localhost:${PORT}` })).statusCode).toBe(200);
    expect((await inject('GET', '/healthz', { host: `[::1]:${PORT}` })).statusCode).toBe(200);
  });

  it('cross-site POST /admin/reload with a foreign Origin is 403; without Origin (curl, agents) it is served', async () => {
    const generation = gw.app.gw.registry.generation;
    expectForbidden(await inject('POST', '/admin/reload', { origin: EVIL }), 'reload', /Origin 'http:\/\/evil\.example' is not allowed \(add it to server\.allowedOrigins\)/);
    expect(gw.app.gw.registry.generation).toBe(generation);
    expect((await inject('POST', '/admin/reload')).statusCode).toBe(200);
    expect(gw.app.gw.registry.generation).toBe(generation + 1);
  });

  it('state-changing requests: foreign, opaque and other-port loopback Origins are refused; own, listed and none pass', async () => {
    const call = (origin?: string, extra: Record<string, string> = {}) =>
      inject('POST', '/v1/tools/debug.echo/call', { 'content-type': 'application/json', ...(origin !== undefined ? { origin } : {}), ...extra }, { arguments: { a: 1 } });
    for (const bad of [EVIL, 'null', 'http://127.0.0.1:5173', 'http://localhost:3000', `https://127.0.0.1:${PORT}`, 'http://rebind.attacker.example:18080']) {
      expectForbidden(await call(bad), bad, /is not allowed/);
    }
    // A text/plain "simple" request (no preflight) is refused the same way.
    expectForbidden(await inject('POST', '/v1/tools/debug.echo/call', { origin: EVIL, 'content-type': 'text/plain' }, '{"arguments":{}}'), 'text/plain', /is not allowed/);
    expectForbidden(await call(undefined, { 'sec-fetch-site': 'cross-site' }), 'sec-fetch-site', /Sec-Fetch-Site/);
    for (const ok of [undefined, OWN, `http://localhost:${PORT}`, LISTED, MCP_LISTED]) {
      const res = await call(ok);
      expect(res.statusCode, String(ok)).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('keyless: approvals refuse any Origin but the own one, and cross-site fetch metadata; the own origin approves', async () => {
    const id = await pending();
    const approve = (headers: Record<string, string>) => inject('POST', `/v1/confirmations/${id}/approve`, { 'content-type': 'application/json', ...headers }, {});
    expectForbidden(await approve({ origin: EVIL }), 'evil', /is not allowed/);
    expectForbidden(await approve({ origin: 'null' }), 'null', /is not allowed/);
    expectForbidden(await approve({ origin: 'http://127.0.0.1:5173' }), 'other port', /is not allowed/);
    expectForbidden(await approve({ origin: LISTED }), 'listed', /no API key configured/);
    expectForbidden(await approve({ 'sec-fetch-site': 'cross-site' }), 'cross-site', /Sec-Fetch-Site/);
    expectForbidden(await approve({ 'sec-fetch-site': 'same-site' }), 'same-site', /Sec-Fetch-Site/);
    expectForbidden(await inject('POST', `/v1/confirmations/${id}/reject`, { origin: LISTED, 'content-type': 'application/json' }, {}), 'reject', /no API key configured/);
    expect(await state(id)).toBe('pending');
    expect(deletes()).toBe(0);
    const ok = await approve({ origin: OWN, 'sec-fetch-site': 'same-origin' });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(deletes()).toBe(1);
  });

  it('keyless: admin routes and the audit refuse a cross-origin read too; ordinary reads are served without CORS', async () => {
    for (const url of ['/v1/audit', '/admin/reload', '/v1/confirmations']) {
      expectForbidden(await inject('GET', url, { origin: EVIL }), url, /no API key configured/);
      expectForbidden(await inject('GET', url, { origin: LISTED }), url, /no API key configured/);
      expectForbidden(await inject('GET', url, { 'sec-fetch-site': 'cross-site' }), url, /no API key configured/);
      expect((await inject('GET', url, { origin: OWN })).statusCode, url).toBe(200);
      expect((await inject('GET', url, { 'sec-fetch-site': 'same-origin' })).statusCode, url).toBe(200);
      expect((await inject('GET', url)).statusCode, url).toBe(200);
    }
    for (const url of ['/v1/tools', '/healthz', '/metrics', '/openapi.json']) {
      const res = await inject('GET', url, { origin: EVIL });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['access-control-allow-origin'], url).toBeUndefined();
    }
  });

  it('the MCP transports refuse a foreign Origin on every method, other-port loopback included', async () => {
    for (const origin of [EVIL, 'http://localhost:3000', 'null']) {
      expectForbidden(await inject('GET', '/sse', { origin }), `/sse ${origin}`, /is not allowed/);
      expectForbidden(await inject('GET', '/mcp', { origin }), `/mcp ${origin}`, /is not allowed/);
    }
  });

  it('a bad entry in server.allowedOrigins or mcp.allowedOrigins is a config error naming its path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-origin-'));
    const file = join(dir, 'gateway.yaml');
    writeFileSync(file, `server:\n  allowedOrigins: ["https://ok.example", "https://bad.example/path"]\nmcp:\n  allowedOrigins: ["*"]\n`);
    let err: unknown;
    try {
      loadConfig({ file, env: {} });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems;
    expect(problems.map((p) => p.path)).toEqual(['/server/allowedOrigins/1', '/mcp/allowedOrigins/0']);
    expect(problems[0]).toMatchObject({ line: 2 });
    expect(problems[0]?.message).toMatch(/not an origin/);
  });
});

describe('origin policy: config warnings', () => {
  it('bound to a non-loopback address, the console\'s limits are told at start (it cannot know its public name)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-origin-'));
    const load = (yaml: string) => {
      const file = join(dir, 'gateway.yaml');
      writeFileSync(file, yaml);
      return loadConfig({ file, env: {} }).warnings.join('\n');
    };
    const key = 'auth: { keys: [ { id: a, key: k1234567 } ] }\n';
    expect(load(`server: { host: 0.0.0.0 }\n${key}`)).toContain('only when opened at http://127.0.0.1:8080 or http://localhost:8080, or from an origin listed in server.allowedOrigins');
    expect(load('server: { host: 10.1.2.3 }\nauth: { mode: none }\n')).toContain('only when opened at http://10.1.2.3:8080 (auth.mode none');
    expect(load(`server: { host: 0.0.0.0, allowedOrigins: ["https://gateway.example"] }\n${key}`)).not.toContain('console');
    expect(load(`server: { host: 0.0.0.0 }\nconsole: { enabled: false }\n${key}`)).not.toContain('console');
    expect(load('{}\n')).not.toContain('console');
  });
});

describe('origin policy: with keys', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({
      config: { server: { port: PORT }, auth: { keys: [{ id: 'admin-1', key: ADMIN_KEY, roles: ['agent', 'approver', 'admin'] }] } },
      tools: { 'echo.yaml': { name: 'debug.echo', description: 'echo', sideEffect: 'none', backends: [{ id: 'b', builtin: 'echo' }] } },
    });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('a cross-site POST /admin/reload is 403 even with the valid admin key, and before authentication', async () => {
    const generation = gw.app.gw.registry.generation;
    const auth = { authorization: `Bearer ${ADMIN_KEY}` };
    expectForbidden(await gw.app.inject({ method: 'POST', url: '/admin/reload', headers: { ...auth, origin: EVIL } }), 'keyed', /is not allowed/);
    expectForbidden(await gw.app.inject({ method: 'POST', url: '/admin/reload', headers: { origin: EVIL } }), 'no key', /is not allowed/); // 403, not 401
    expectForbidden(await gw.app.inject({ method: 'POST', url: '/admin/reload', headers: { ...auth, host: REBIND } }), 'rebind', /not a loopback name/);
    expect(gw.app.gw.registry.generation).toBe(generation);
    expect((await gw.app.inject({ method: 'POST', url: '/admin/reload', headers: auth })).statusCode).toBe(200);
    expect((await gw.app.inject({ method: 'POST', url: '/admin/reload', headers: { ...auth, origin: OWN } })).statusCode).toBe(200);
    // With a key the audit may be read from any page's request (the key is the proof; the page cannot read the answer).
    const read = await gw.app.inject({ method: 'GET', url: '/v1/audit', headers: { ...auth, origin: EVIL } });
    expect(read.statusCode).toBe(200);
    expect(read.headers['access-control-allow-origin']).toBeUndefined();
  });
});
