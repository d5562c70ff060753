import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/app.js';
import { TestIssuer } from '../helpers/issuer.js';
import { issuerEntry, startOidcGateway } from '../helpers/oidc-gateway.js';

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
    gw = await startOidcGateway([issuerEntry(idp, { claims: { id: 'client_id' }, defaultTools: ['*'] })]);
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
});
