import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeJwt } from 'jose';
import type { Client } from '@modelcontextprotocol/client';
import { echoTool, startGateway, type TestGateway } from '../helpers/app.js';
import { freePort } from '../helpers/server-process.js';
import { startIssuer, type TestIssuer } from '../helpers/oidc-provider.js';
import { connectWithOAuth } from '../helpers/mcp-oauth-client.js';
import { clientFile, ensureClients, runDriver } from '../helpers/clients.js';
import { lineSink } from '../helpers/log-lines.js';
import { createLogger } from '../../src/logger.js';

const BROWSER = fileURLToPath(new URL('../fixtures/oauth/browser.mjs', import.meta.url));

const OTHER = 'http://127.0.0.1:1/another-api';
const SCOPE = 'mcp:tools';

type ToolResult = { isError?: boolean; content?: { type: string; text?: string }[] };
const textOf = (r: unknown) => ((r as ToolResult).content ?? []).map((c) => c.text ?? '').join('');

/**
 * The MCP authorization specification end to end, with real parts only: the v2 SDK client's OAuth
 * machinery, a real OpenID provider (oidc-provider: DCR, PKCE, RFC 8707 JWT access tokens) and a
 * real listening gateway. Nothing is configured in the client but the gateway's URL.
 */
describe('MCP authorization end to end (v2 SDK client, oidc-provider)', () => {
  let iss: TestIssuer;
  let gw: TestGateway;
  let base = '';
  const open: Client[] = [];
  /** The gateway's log, at debug level; every access token seen is checked against it at the end. */
  const logLines: string[] = [];
  const tokensSeen: string[] = [];

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // The SDK asks for the resource the metadata names (<publicUrl>/mcp from the path-based document).
    iss = await startIssuer({ resources: [base, `${base}/`, `${base}/mcp`, OTHER], scopes: [SCOPE] });
    gw = await startGateway({
      logger: createLogger('debug', new Set(), lineSink(logLines)),
      config: {
        server: { publicUrl: base },
        auth: { oidc: [{ issuer: iss.issuer, algorithms: ['RS256'], requiredScopes: [SCOPE] }] },
        mcp: { toolNames: 'canonical' }, // the provider names are mcp-tool-names.test.ts's subject
      },
      tools: {
        'weather.yaml': echoTool('weather.current'),
        'read.yaml': echoTool('files.read'),
        'ops.yaml': echoTool('ops.restart', { sideEffect: 'write' }),
      },
    });
    await gw.app.listen({ port, host: '127.0.0.1' });
  });
  afterAll(async () => {
    for (const c of open) await c.close().catch(() => undefined);
    await gw?.close();
    await iss?.close();
  });

  it('discovers the metadata from the 401, registers, signs in with code + PKCE, lists and calls tools', async () => {
    const { client, provider } = await connectWithOAuth(`${base}/mcp`, iss, 'alice');
    open.push(client);
    // Discovery went gateway → issuer; the client registered itself (no pre-shared client id).
    expect(iss.requests).toContain('POST /reg');
    expect(provider.registrations.size).toBe(1);
    const auth = provider.authorizationUrl!;
    expect(auth.origin).toBe(iss.issuer);
    expect(auth.searchParams.get('code_challenge_method')).toBe('S256');
    expect((auth.searchParams.get('scope') ?? '').split(' ')).toContain(SCOPE); // from scopes_supported (the SDK adds offline_access)
    expect([`${base}/mcp`, base, `${base}/`]).toContain(auth.searchParams.get('resource'));
    // A JWT for this gateway, of this user, minted by the real issuer.
    const token = provider.stored!.access_token;
    tokensSeen.push(token);
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({ iss: iss.issuer, sub: 'alice', scope: SCOPE, aud: auth.searchParams.get('resource') });
    expect(iss.logins.at(-1)?.user).toBe('alice');

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['files.read', 'ops.restart', 'weather.current']);
    const res = await client.callTool({ name: 'files.read', arguments: { path: '/etc/motd' } });
    expect((res as ToolResult).isError).toBeFalsy();
    expect(textOf(res)).toContain('/etc/motd');

    const audit = await gw.audit();
    const rec = audit.filter((r) => r['tool'] === 'files.read').at(-1);
    const clientId = [...provider.registrations.values()][0]!.client_id;
    expect(rec).toMatchObject({ caller: 'alice', outcome: 'ok', subject: 'alice', issuer: iss.issuer, clientId });
    expect(JSON.stringify(audit)).not.toContain(token);
  });

  it('a second user whose token carries fewer tools sees and may call fewer tools', async () => {
    const { client, provider } = await connectWithOAuth(`${base}/mcp`, iss, 'bob');
    open.push(client);
    tokensSeen.push(provider.stored!.access_token);
    expect(decodeJwt(provider.stored!.access_token)).toMatchObject({ sub: 'bob', tools: ['weather.*'] });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['weather.current']);
    const ok = await client.callTool({ name: 'weather.current', arguments: { city: 'Oslo' } });
    expect((ok as ToolResult).isError).toBeFalsy();
    const denied = await client.callTool({ name: 'files.read', arguments: { path: '/etc/motd' } });
    expect((denied as ToolResult).isError).toBe(true);
    expect(textOf(denied)).not.toContain('/etc/motd');
    const rec = (await gw.audit()).filter((r) => r['caller'] === 'bob');
    expect(rec.some((r) => r['tool'] === 'weather.current' && r['outcome'] === 'ok')).toBe(true);
    expect(rec.some((r) => r['tool'] === 'files.read' && r['outcome'] === 'ok')).toBe(false);
  });

  it('a token the same issuer minted for another resource is refused with 401 invalid_token', async () => {
    const token = await iss.tokenFor('alice', { resource: OTHER, scope: SCOPE });
    tokensSeen.push(token);
    expect(decodeJwt(token)).toMatchObject({ iss: iss.issuer, aud: OTHER, sub: 'alice' });
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const mcp = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(init),
    });
    expect(mcp.status).toBe(401);
    const challenge = mcp.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer /);
    expect(challenge).toContain('error="invalid_token"');
    expect(challenge).toContain(`resource_metadata="${base}/.well-known/oauth-protected-resource`);
    const rest = await fetch(`${base}/v1/tools`, { headers: { authorization: `Bearer ${token}` } });
    expect(rest.status).toBe(401);
    const body = (await rest.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('UNAUTHENTICATED');
    expect(JSON.stringify(body)).not.toContain(token);
  });

  it('a token of this gateway without the required scope is 403 insufficient_scope', async () => {
    const token = await iss.tokenFor('alice', { scope: 'openid' });
    tokensSeen.push(token);
    expect(decodeJwt(token).scope ?? '').not.toContain(SCOPE);
    const mcp = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(mcp.status).toBe(403);
    expect(mcp.headers.get('www-authenticate') ?? '').toContain('error="insufficient_scope"');
    expect(mcp.headers.get('www-authenticate') ?? '').toContain(SCOPE);
  });

  describe('mcp-remote (its own OAuth client; $BROWSER follows the automated login)', () => {
    beforeAll(async () => {
      await ensureClients();
    }, 11 * 60_000);

    /** mcp-remote with no header: it must find the issuer from the gateway's 401 and sign in by itself. */
    async function viaMcpRemote(user: string, calls: { name: string; arguments: Record<string, unknown> }[], transport: 'http' | 'sse' = 'http') {
      const browserLog = join(mkdtempSync(join(tmpdir(), 'toolgate-browser-')), 'visits.jsonl');
      if (/[\s:]/.test(process.execPath + BROWSER)) throw new Error(`$BROWSER cannot hold a path with a space or colon: ${process.execPath} ${BROWSER}`);
      const report = await runDriver(
        'mcp-remote',
        { url: `${base}${transport === 'http' ? '/mcp' : '/sse'}`, key: '', transport, calls, ...(process.env['E2E_VERBOSE'] ? { verbose: true } : {}), env: { BROWSER: `${process.execPath} ${BROWSER}`, TOOLGATE_LOGIN_HINT: user, TOOLGATE_BROWSER_LOG: browserLog, DISPLAY: '', XDG_CURRENT_DESKTOP: '' } },
        { node: 'current', args: [clientFile('mcp-remote/dist/proxy.js')], timeoutMs: 90_000 },
      );
      let visits: { url?: string; status?: number; error?: string }[] = [];
      try {
        visits = readFileSync(browserLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { url?: string });
      } catch {
        // the browser never ran
      }
      return { report, visits };
    }

    it('discovers, registers, signs alice in through the browser, lists and calls tools', async () => {
      const before = iss.requests.filter((r) => r === 'POST /reg').length;
      const { report, visits } = await viaMcpRemote('alice', [{ name: 'files.read', arguments: { path: '/srv/remote.txt' } }]);
      expect(report.error, JSON.stringify(visits)).toBeUndefined();
      expect(iss.requests.filter((r) => r === 'POST /reg').length).toBe(before + 1);
      expect(visits[0]?.url).toMatch(new RegExp(`^${iss.issuer}/auth\\?`));
      const callback = visits.find((v) => v.url && new URL(v.url).searchParams.has('code') && !v.url.startsWith(iss.issuer));
      expect(callback, JSON.stringify(visits)).toBeDefined();
      expect(iss.logins.at(-1)?.user).toBe('alice');
      expect(report.tools.sort()).toEqual(['files.read', 'ops.restart', 'weather.current']);
      expect(report.results).toEqual([{ name: 'files.read', text: expect.stringContaining('/srv/remote.txt') as unknown as string, isError: false }]);
    }, 120_000);

    it('over /sse (the 2024-11-05 transport) the same: 401 → sign-in → tools', async () => {
      const { report, visits } = await viaMcpRemote('alice', [{ name: 'weather.current', arguments: { city: 'Lima' } }], 'sse');
      expect(report.error, JSON.stringify(visits)).toBeUndefined();
      expect(visits.some((v) => v.url?.startsWith(`${iss.issuer}/auth?`))).toBe(true);
      expect(report.tools.sort()).toEqual(['files.read', 'ops.restart', 'weather.current']);
      expect(report.results[0]).toMatchObject({ name: 'weather.current', isError: false });
    }, 120_000);

    it('bob, signed in the same way, sees only his tools', async () => {
      const { report, visits } = await viaMcpRemote('bob', [{ name: 'files.read', arguments: { path: '/srv/remote.txt' } }]);
      expect(report.error, JSON.stringify(visits)).toBeUndefined();
      expect(iss.logins.at(-1)?.user).toBe('bob');
      expect(report.tools).toEqual(['weather.current']);
      expect(report.results[0]?.isError).toBe(true);
      expect(report.results[0]?.text).not.toContain('/srv/remote.txt');
    }, 120_000);
  });

  it('no access token, accepted or refused, is in any gateway log line or audit record', async () => {
    expect(tokensSeen.length).toBeGreaterThanOrEqual(4);
    expect(logLines.length).toBeGreaterThan(10);
    const audit = JSON.stringify(await gw.audit());
    for (const t of tokensSeen) {
      const signature = t.split('.')[2]!;
      expect(logLines.filter((l) => l.includes(signature))).toEqual([]);
      expect(audit).not.toContain(signature);
    }
  });
});
