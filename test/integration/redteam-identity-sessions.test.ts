import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/app.js';
import { TestIssuer } from '../helpers/issuer.js';
import { echoTool } from '../helpers/app.js';
import { OIDC_TOOLS, issuerEntry, startOidcGateway } from '../helpers/oidc-gateway.js';

const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
const headers = (token: string, sid?: string) => ({
  authorization: `Bearer ${token}`,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  ...(sid ? { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' } : {}),
});

/**
 * Red team, issue 23: with `claims.id: client_id` (the caller is the client), two people signed in
 * through one client are one caller to limits, but an MCP session is a person's: on dd5365e the
 * second person's token reached the first one's session (and its streams and calls).
 */
describe('red team: an MCP session belongs to a person, also when the caller id is the client', () => {
  let idp: TestIssuer;
  let gw: TestGateway;

  beforeAll(async () => {
    idp = await TestIssuer.start();
    gw = await startOidcGateway([issuerEntry(idp, { claims: { id: 'client_id' }, defaultTools: ['*'] })], {
      tools: { ...OIDC_TOOLS, 'wipe.yaml': { ...echoTool('ops.wipe'), sideEffect: 'destructive' } },
    });
  });
  afterAll(async () => {
    await gw.close();
    await idp.close();
  });

  it('erin\'s session through client cli-a is not found with frank\'s token through cli-a; erin\'s next token finds it', async () => {
    const erin = await idp.mint({ sub: 'erin', client_id: 'cli-a' });
    const opened = await gw.app.inject({ method: 'POST', url: '/mcp', headers: headers(erin), payload: init });
    expect(opened.statusCode).toBe(200);
    const sid = opened.headers['mcp-session-id'] as string;
    const frank = await idp.mint({ sub: 'frank', client_id: 'cli-a' });
    const hijack = await gw.app.inject({ method: 'POST', url: '/mcp', headers: headers(frank, sid), payload: list });
    expect(hijack.statusCode).toBe(404);
    const again = await gw.app.inject({ method: 'POST', url: '/mcp', headers: headers(await idp.mint({ sub: 'erin', client_id: 'cli-a', jti: 'second' }), sid), payload: list });
    expect(again.statusCode).toBe(200);
  });

  it('erin\'s call record through cli-a is not frank\'s to read or cancel through cli-a; erin reads it with another token', async () => {
    const erin = await idp.mint({ sub: 'erin', client_id: 'cli-a' });
    const asked = await gw.call('ops.wipe', {}, { key: erin });
    expect(asked.statusCode, asked.body).toBe(202);
    const callId = (asked.json() as { callId: string }).callId;
    const frank = await idp.mint({ sub: 'frank', client_id: 'cli-a' });
    expect((await gw.app.inject({ method: 'GET', url: `/v1/calls/${callId}`, headers: { authorization: `Bearer ${frank}` } })).statusCode).toBe(404);
    expect((await gw.app.inject({ method: 'DELETE', url: `/v1/calls/${callId}`, headers: { authorization: `Bearer ${frank}` } })).statusCode).not.toBe(200);
    const erin2 = await idp.mint({ sub: 'erin', client_id: 'cli-a', jti: 'again' });
    expect((await gw.app.inject({ method: 'GET', url: `/v1/calls/${callId}`, headers: { authorization: `Bearer ${erin2}` } })).statusCode).toBe(200);
  });

  it('an Idempotency-Key is a person\'s: frank reusing erin\'s key through cli-a does not get her stored answer', async () => {
    const erin = await idp.mint({ sub: 'erin', client_id: 'cli-a' });
    const frank = await idp.mint({ sub: 'frank', client_id: 'cli-a' });
    const headers = { 'idempotency-key': 'erin-key-0001' };
    const hers = await gw.call('weather.now', { q: 'x' }, { key: erin, headers });
    expect(hers.statusCode, hers.body).toBe(200);
    const his = await gw.call('weather.now', { q: 'x' }, { key: frank, headers });
    expect(his.statusCode, his.body).toBe(200);
    expect((his.json() as { callId: string }).callId).not.toBe((hers.json() as { callId: string }).callId);
    // Erin's own retry is still answered from the store.
    const again = await gw.call('weather.now', { q: 'x' }, { key: await idp.mint({ sub: 'erin', client_id: 'cli-a', jti: 'r' }), headers });
    expect((again.json() as { callId: string }).callId).toBe((hers.json() as { callId: string }).callId);
  });
});
