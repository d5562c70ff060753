import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoTool, startGateway, type TestGateway } from '../helpers/app.js';

const KEY = 'surface-agent-key-0001';
const PUBLIC = 'https://toolgate.example.com';
const ISSUER = 'http://127.0.0.1:9/realms/acme';
const METADATA = `${PUBLIC}/.well-known/oauth-protected-resource`;

/** The MCP authorization surface: RFC 9728 metadata and the 401 challenge, with OAuth and with API keys only. */
describe('OAuth protected-resource surface with auth.oidc', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startGateway({
      config: {
        server: { publicUrl: `${PUBLIC}/` },
        auth: {
          keys: [{ id: 'agent-1', key: KEY, roles: ['agent'] }],
          oidc: [
            { issuer: ISSUER, jwksUri: `${ISSUER}/certs`, requiredScopes: ['toolgate'] },
            { issuer: 'http://127.0.0.1:9/second/', jwksUri: 'http://127.0.0.1:9/second/jwks', requiredScopes: ['toolgate', 'mcp:use'] },
          ],
        },
      },
      tools: { 'echo.yaml': echoTool('debug.echo') },
    });
  });
  afterAll(async () => gw?.close());

  it('GET /.well-known/oauth-protected-resource names the gateway, its issuers and their required scopes, without a key', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      resource: PUBLIC, // publicUrl as configured, trailing slash trimmed
      authorization_servers: [ISSUER, 'http://127.0.0.1:9/second/'],
      bearer_methods_supported: ['header'],
      scopes_supported: ['toolgate', 'mcp:use'],
      resource_name: 'toolgate',
    });
  });

  it('the path-based document of <publicUrl>/mcp names <publicUrl>/mcp as its resource (RFC 9728 §3.3)', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource/mcp' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ resource: `${PUBLIC}/mcp`, authorization_servers: [ISSUER, 'http://127.0.0.1:9/second/'] });
  });

  it('a Host header does not change the resource (no name is taken from the request)', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource', headers: { host: 'localhost:8080' } });
    expect(res.json()).toMatchObject({ resource: PUBLIC });
  });

  it('a 401 on REST names the metadata; with a refused credential it says invalid_token, in toolgate\'s error body', async () => {
    const none = await gw.app.inject({ method: 'GET', url: '/v1/tools' });
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toBe(`Bearer resource_metadata="${METADATA}"`);
    expect(none.json()).toMatchObject({ error: { code: 'UNAUTHENTICATED' } });

    const wrong = await gw.app.inject({ method: 'POST', url: '/v1/tools/debug.echo/call', headers: { authorization: 'Bearer not-a-key' }, payload: { arguments: {} } });
    expect(wrong.statusCode).toBe(401);
    const h = String(wrong.headers['www-authenticate']);
    expect(h).toMatch(new RegExp(`^Bearer resource_metadata="${METADATA.replace(/[./]/g, '\\$&')}", error="invalid_token", error_description="[^"]+"$`));
    expect(h).not.toContain('not-a-key');
  });

  it('a 401 on /mcp (POST and GET) and on /sse carries the same challenge', async () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    const post = await gw.app.inject({ method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, payload: init });
    const get = await gw.app.inject({ method: 'GET', url: '/mcp', headers: { accept: 'text/event-stream', authorization: 'Bearer nope' } });
    const sse = await gw.app.inject({ method: 'GET', url: '/sse', headers: { accept: 'text/event-stream' } });
    for (const r of [post, get, sse]) {
      expect(r.statusCode).toBe(401);
      expect(r.headers['www-authenticate']).toMatch(new RegExp(`^Bearer resource_metadata="${METADATA.replace(/[./]/g, '\\$&')}"`));
    }
    expect(get.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('a 403 of an API-key caller carries no OAuth challenge (no scope would help)', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/v1/audit', headers: { authorization: `Bearer ${KEY}` } });
    expect(res.statusCode).toBe(403);
    expect(res.headers['www-authenticate']).toBeUndefined();
  });

  it('the metadata routes are in the OpenAPI document, needing no key', async () => {
    const doc = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, { get?: { security?: unknown[] } }> };
    expect(doc.paths['/.well-known/oauth-protected-resource']?.get?.security).toEqual([]);
    expect(doc.paths['/.well-known/oauth-protected-resource/mcp']?.get?.security).toEqual([]);
  });

  it('OAuth endpoints the gateway does not have stay plain 404s when it has OAuth (the issuer serves them)', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/register', payload: {} });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.message).toBe('no route POST /register');
  });
});

describe('API keys only: the gateway says so', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ config: { auth: { keys: [{ id: 'agent-1', key: KEY, roles: ['agent'] }] } }, tools: { 'echo.yaml': echoTool('debug.echo') } });
  });
  afterAll(async () => gw?.close());

  it('both metadata documents are 404 in the error shape, saying the gateway takes API keys only', async () => {
    for (const url of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const res = await gw.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ error: { code: 'NOT_FOUND', retryable: false } });
      expect(res.json().error.message).toMatch(/takes API keys only and has no OAuth authorization server/);
    }
  });

  it('a 401 says the gateway takes API keys and how to send one; its challenge has no resource_metadata', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/mcp', headers: { authorization: 'Bearer wrong', 'content-type': 'application/json' }, payload: {} });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.message).toMatch(/^unknown API key: this gateway takes API keys only .*Authorization: Bearer <key>/);
    const h = String(res.headers['www-authenticate']);
    expect(h).toMatch(/^Bearer realm="toolgate", error="invalid_token", error_description="this gateway takes API keys only/);
    expect(h).not.toContain('resource_metadata');
    const rest = await gw.app.inject({ method: 'GET', url: '/v1/tools' });
    expect(rest.headers['www-authenticate']).toMatch(/^Bearer realm="toolgate", error_description=/);
  });

  it('the endpoints an OAuth client guesses next (registration, token, server metadata) answer with the same advice', async () => {
    const reg = await gw.app.inject({ method: 'POST', url: '/register', payload: { redirect_uris: ['http://localhost:1/cb'] } });
    const token = await gw.app.inject({ method: 'POST', url: '/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=authorization_code' });
    const as = await gw.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    for (const r of [reg, token, as]) {
      expect(r.statusCode).toBe(404);
      expect(r.json().error.message).toMatch(/takes API keys only/);
    }
  });
});

describe('auth.oidc without server.publicUrl', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ config: { auth: { keys: [{ id: 'agent-1', key: KEY }], oidc: [{ issuer: ISSUER, jwksUri: `${ISSUER}/certs`, audience: 'toolgate' }] } } });
  });
  afterAll(async () => gw?.close());

  it('publishes no metadata (never one built from the request Host header) and says why; its 401 is a plain Bearer challenge', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource' });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.message).toMatch(/server\.publicUrl is not configured/);
    const unauth = await gw.app.inject({ method: 'GET', url: '/v1/tools' });
    expect(unauth.statusCode).toBe(401);
    expect(unauth.headers['www-authenticate']).toBe('Bearer realm="toolgate"');
    expect(unauth.json().error.message).not.toMatch(/API keys only/);
  });
});
