import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { TokenEndpoint } from '../helpers/token-endpoint.js';

/**
 * A remote MCP server (Streamable HTTP, v2 SDK) that demands a token issued for it: the gateway's
 * pooled session gets one by client credentials, reuses it, and renews it before it expires.
 */
const CC_SECRET = 'mcp-cc-secret-7781';
const KEY = 'agent-key-mcp-0123456789';

describe('upstream credentials (remote MCP server)', () => {
  let idp: TokenEndpoint;
  let http: Server;
  let url = '';
  let gw: TestGateway;
  const verdicts: { method: string; sub: string | null }[] = [];
  /** Tokens the server no longer takes (revoked before their expiry). */
  const revoked = new Set<string>();
  let lastToken = '';

  beforeAll(async () => {
    idp = await new TokenEndpoint({ gateway: CC_SECRET }).start();
    idp.expiresIn = 3;
    const build = () => {
      const server = new McpServer({ name: 'guarded', version: '1.0.0' });
      server.registerTool('echo', { description: 'Echoes its text', inputSchema: z.object({ text: z.string() }), annotations: { readOnlyHint: true } }, async ({ text }) => ({
        content: [{ type: 'text', text }],
      }));
      return server;
    };
    const mcp = createMcpHandler(build);
    http = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      let method = req.method ?? '';
      try {
        method = (JSON.parse(text) as { method?: string }).method ?? method;
      } catch {
        // not JSON (GET, DELETE)
      }
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      try {
        if (revoked.has(token)) throw new Error('revoked');
        const claims = await idp.verify(token, url);
        lastToken = token;
        verdicts.push({ method, sub: claims.sub ?? null });
      } catch {
        verdicts.push({ method, sub: null });
        res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token"' });
        return void res.end('{"error":"invalid_token"}');
      }
      const request = new Request(url, { method: req.method, headers: req.headers as Record<string, string>, ...(req.method === 'POST' ? { body: text } : {}) });
      const response = await mcp.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) for await (const chunk of response.body) res.write(chunk);
      res.end();
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
    gw = await startGateway({
      env: { CC_SECRET },
      config: { auth: { keys: [{ id: 'agent-1', key: KEY, roles: ['agent'] }] } },
      tools: {
        'remote.yaml': {
          kind: 'mcp-server',
          name: 'remote',
          transport: 'streamable-http',
          url,
          prestart: true,
          include: ['*'],
          credentials: { clientCredentials: { tokenUrl: idp.tokenUrl, clientId: 'gateway', clientSecret: '${env:CC_SECRET}', audience: url } },
        },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    http?.closeAllConnections();
    await new Promise<void>((resolve) => http?.close(() => resolve()));
    await idp?.close();
  });

  it('the pooled session carries a token for the server (one token request for the import and many calls), renewed before expiry', async () => {
    expect(gw.app.gw.registry.get('remote.echo'), JSON.stringify(gw.app.gw.registry.problems)).toBeDefined();
    for (let i = 0; i < 3; i++) {
      const res = await gw.call('remote.echo', { text: `hi ${i}` }, { key: KEY });
      expect(res.statusCode, res.body).toBe(200);
      expect(JSON.parse(res.body).result.content[0].text).toBe(`hi ${i}`);
    }
    expect(verdicts.length).toBeGreaterThan(3);
    expect(verdicts.every((v) => v.sub === 'gateway'), JSON.stringify(verdicts)).toBe(true);
    expect(idp.requests).toHaveLength(1);
    expect(idp.requests[0]!.form).toMatchObject({ grant_type: 'client_credentials', resource: url, audience: url });
    // 3 s tokens are renewed 10 % early: past 2.7 s the next request fetches a new one.
    await new Promise((r) => setTimeout(r, 2800));
    const res = await gw.call('remote.echo', { text: 'later' }, { key: KEY });
    expect(res.statusCode, res.body).toBe(200);
    expect(idp.requests).toHaveLength(2);
    expect(verdicts.every((v) => v.sub === 'gateway')).toBe(true);
  });

  it('a token the server stops taking (401) is dropped: the request is sent again once with a new token', async () => {
    revoked.add(lastToken);
    const before = idp.requests.length;
    const res = await gw.call('remote.echo', { text: 'after revocation' }, { key: KEY });
    expect(res.statusCode, res.body).toBe(200);
    expect(idp.requests.length - before).toBe(1);
    expect(verdicts.some((v) => v.sub === null)).toBe(true);
    expect(JSON.stringify(gw.app.gw.mcpPool.status('remote'))).not.toContain(lastToken);
  });
});

describe('upstream credentials (remote MCP server over the 2024-11-05 SSE transport)', () => {
  let idp: TokenEndpoint;
  let http: Server;
  let base = '';
  let gw: TestGateway;
  const subs: (string | null)[] = [];

  beforeAll(async () => {
    idp = await new TokenEndpoint({ gateway: CC_SECRET }).start();
    const { McpServer: V1Server } = await import('@modelcontextprotocol/sdk/server/mcp.js');
    const { SSEServerTransport } = await import('@modelcontextprotocol/sdk/server/sse.js');
    const transports = new Map<string, InstanceType<typeof SSEServerTransport>>();
    http = createServer(async (req, res) => {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      try {
        subs.push((await idp.verify(token, `${base}/sse`)).sub ?? null);
      } catch {
        subs.push(null);
        res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' });
        return void res.end();
      }
      if (req.method === 'GET' && req.url === '/sse') {
        const transport = new SSEServerTransport('/messages', res);
        transports.set(transport.sessionId, transport);
        const server = new V1Server({ name: 'sse-guarded', version: '1.0.0' });
        server.registerTool('echo', { description: 'Echoes its text', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } }, async ({ text }) => ({
          content: [{ type: 'text' as const, text }],
        }));
        await server.connect(transport);
        return;
      }
      const id = new URL(req.url ?? '', base).searchParams.get('sessionId') ?? '';
      const transport = transports.get(id);
      if (!transport) return void res.writeHead(404).end();
      await transport.handlePostMessage(req, res);
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    gw = await startGateway({
      env: { CC_SECRET },
      config: { auth: { keys: [{ id: 'agent-1', key: KEY, roles: ['agent'] }] } },
      tools: {
        'legacy.yaml': {
          kind: 'mcp-server',
          name: 'legacy',
          transport: 'sse',
          url: `${base}/sse`,
          prestart: true,
          include: ['*'],
          credentials: { clientCredentials: { tokenUrl: idp.tokenUrl, clientId: 'gateway', clientSecret: '${env:CC_SECRET}', audience: `${base}/sse`, authMethod: 'client_secret_post' } },
        },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    http?.closeAllConnections();
    await new Promise<void>((resolve) => http?.close(() => resolve()));
    await idp?.close();
  });

  it('the stream and every posted message carry the token; one token request', async () => {
    expect(gw.app.gw.registry.get('legacy.echo'), JSON.stringify(gw.app.gw.registry.problems)).toBeDefined();
    for (let i = 0; i < 3; i++) {
      const res = await gw.call('legacy.echo', { text: `sse ${i}` }, { key: KEY });
      expect(res.statusCode, res.body).toBe(200);
      expect(JSON.parse(res.body).result.content[0].text).toBe(`sse ${i}`);
    }
    expect(subs.length).toBeGreaterThan(3);
    expect(subs.every((s) => s === 'gateway'), JSON.stringify(subs)).toBe(true);
    expect(idp.requests).toHaveLength(1);
    expect(idp.requests[0]!.form).toMatchObject({ client_id: 'gateway', client_secret: CC_SECRET, resource: `${base}/sse` });
  });
});
