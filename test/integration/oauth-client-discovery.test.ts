import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams, selectResourceURL } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { echoTool, startGateway, type TestGateway } from '../helpers/app.js';
import { TestIssuer } from '../helpers/issuer.js';
import { freePort } from '../helpers/server-process.js';

/**
 * The MCP SDK's own OAuth discovery (what mcp-remote, the Inspector and SDK clients run) against a
 * listening gateway: from the 401 to the issuer, and the RFC 8707 resource it would ask a token for,
 * which the gateway then accepts as audience without any audience configured.
 */
describe('an MCP SDK client discovers the gateway\'s authorization server', () => {
  let idp: TestIssuer;
  let gw: TestGateway;
  let base: string;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    idp = await TestIssuer.start({ audience: 'unused' });
    gw = await startGateway({
      tools: { 'echo.yaml': echoTool('debug.echo') },
      config: { mcp: { toolNames: 'canonical' }, server: { publicUrl: base }, auth: { keys: [{ id: 'k', key: 'discovery-key-0001' }], oidc: [{ issuer: idp.url, defaultTools: ['*'], requiredScopes: ['mcp'] }] } },
    });
    await gw.app.listen({ port, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await gw?.close();
    await idp?.close();
  });

  it('401 → resource_metadata → authorization server; the resource it asks a token for is one the gateway accepts', async () => {
    const server = new URL(`${base}/mcp`);
    const res = await fetch(server, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(res.status).toBe(401);
    const { resourceMetadataUrl, error } = extractWWWAuthenticateParams(res);
    expect(resourceMetadataUrl?.href).toBe(`${base}/.well-known/oauth-protected-resource`);
    expect(error).toBeUndefined(); // no token was sent
    // (the issuer's own metadata is the issuer's business: the test issuer serves only what tokens need)
    const metadata = await discoverOAuthProtectedResourceMetadata(server, { resourceMetadataUrl: resourceMetadataUrl as URL });
    expect(metadata.authorization_servers).toEqual([idp.url]);
    expect(metadata.scopes_supported).toEqual(['mcp']);
    const resource = await selectResourceURL(server, {} as never, metadata);
    expect(resource?.href).toBe(`${base}/`); // a parsed URL: the bare origin gains a slash

    // a token minted for exactly that resource works through the SDK's own client
    const token = await idp.mint({ sub: 'sdk-user', aud: resource?.href, scope: 'mcp' });
    const client = new Client({ name: 'discovery', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(server, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['debug.echo']);
    await client.close();
  });

  it('the path-based document a client probes without the header also names an accepted resource', async () => {
    const doc = (await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)).json()) as { resource: string };
    expect(doc.resource).toBe(`${base}/mcp`);
    const token = await idp.mint({ sub: 'sdk-user', aud: doc.resource, scope: 'mcp' });
    const res = await fetch(`${base}/v1/tools`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
  });
});
