import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { TestIssuer } from '../helpers/issuer.js';
import { issuerEntry, OIDC_TOOLS, listTools, reasonOf } from '../helpers/oidc-gateway.js';

/** Tokens on /mcp (a real 2025-era SDK client over a listening socket), and trusted issuers closing the keyless mode. */
describe('OIDC tokens on /mcp, and a config with issuers but no key', () => {
  let idp: TestIssuer;
  let gw: TestGateway;
  let base: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    idp = await TestIssuer.start();
    gw = await startGateway({ tools: OIDC_TOOLS, config: { auth: { oidc: [issuerEntry(idp)] }, mcp: { toolNames: 'canonical' } } });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await gw.close();
    await idp.close();
  });

  it('with issuers and no API key the gateway is not open: no credentials is 401, not the all-roles local caller', async () => {
    const none = await gw.app.inject({ method: 'GET', url: '/v1/tools' });
    expect(none.statusCode).toBe(401);
    expect(none.json().error.message).toMatch(/API key or access token/);
    expect((await gw.app.inject({ method: 'GET', url: '/admin/mcp' })).statusCode).toBe(401);
    expect(reasonOf(await listTools(gw, 'whatever'))).toBe('malformed');
  });

  it('an MCP client with a token lists only its tools and calls them', async () => {
    const token = await idp.mint({ sub: 'mcp-user', tools: ['weather.*'] });
    const mcp = new Client({ name: 'oidc-mcp-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    clients.push(mcp);
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['weather.now', 'weather.week']);
    const out = await mcp.callTool({ name: 'weather.now', arguments: { q: 1 } });
    expect(out.isError).toBeFalsy();
  });

  it('an expired token on /mcp is 401 with its reason, and the SDK client fails to connect', async () => {
    const token = await idp.mint({ tools: ['*'] }, { expiresIn: -600 });
    const res = await gw.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } },
    });
    expect(res.statusCode).toBe(401);
    expect(reasonOf(res)).toBe('expired');
    const mcp = new Client({ name: 'oidc-mcp-expired', version: '1.0.0' });
    await expect(mcp.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))).rejects.toThrow();
  });
});
