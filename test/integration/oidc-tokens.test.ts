import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { bearerTokenOf } from '../../src/auth/token-vault.js';
import type { TestGateway } from '../helpers/app.js';
import { TestIssuer } from '../helpers/issuer.js';
import { lineSink } from '../helpers/log-lines.js';
import { API_KEY, issuerEntry, listTools, reasonOf, startOidcGateway, toolNames } from '../helpers/oidc-gateway.js';

/** JWT access tokens beside API keys, through a real gateway and a real issuer on 127.0.0.1. */
describe('OIDC access tokens', () => {
  let idp: TestIssuer;
  let idp2: TestIssuer;
  let gw: TestGateway;
  const lines: string[] = [];

  beforeAll(async () => {
    idp = await TestIssuer.start();
    idp2 = await TestIssuer.start({ alg: 'ES256', audience: 'https://toolgate.other' });
    gw = await startOidcGateway(
      [
        issuerEntry(idp, { scopePrefixes: { tools: 'tools:', roles: 'role:' } }),
        issuerEntry(idp2, { claims: { id: 'client_id', roles: 'realm_access.roles', tools: 'tools' }, defaultTools: ['files.*'] }),
      ],
      { logger: createLogger('info', new Set(), lineSink(lines)) },
    );
  });
  afterAll(async () => {
    await gw.close();
    await idp.close();
    await idp2.close();
  });

  it('a valid token lists and calls only the tools its claim names', async () => {
    const token = await idp.mint({ sub: 'alice', tools: ['weather.*'] });
    expect(toolNames(await listTools(gw, token))).toEqual(['weather.now', 'weather.week']);
    const ok = await gw.call('weather.now', { q: 1 }, { key: token });
    expect(ok.statusCode).toBe(200);
    const hidden = await gw.call('files.read', {}, { key: token });
    expect(hidden.statusCode).toBe(403); // outside its globs, as for a key
    const [rec] = (await gw.audit()).filter((r) => r['tool'] === 'weather.now');
    expect(rec?.['caller']).toBe('alice');
  });

  it('scopes with the configured prefixes give tool globs and roles', async () => {
    const token = await idp.mint({ sub: 'bob', scope: 'openid tools:files.* role:agent' });
    expect(toolNames(await listTools(gw, token))).toEqual(['files.read']);
    expect((await gw.call('files.read', {}, { key: token })).statusCode).toBe(200);
  });

  it('a token without agent role (its roles claim names none) may look but not call', async () => {
    const token = await idp.mint({ sub: 'carol', tools: ['*'], roles: ['approver', 'superuser'] });
    expect(toolNames(await listTools(gw, token))).toHaveLength(3);
    expect((await gw.call('weather.now', {}, { key: token })).statusCode).toBe(403);
  });

  it('the API key still works in the same config, and an unknown opaque value is still a 401', async () => {
    expect(toolNames(await listTools(gw, API_KEY))).toHaveLength(3);
    expect((await gw.call('weather.now', {}, { key: API_KEY })).statusCode).toBe(200);
    const wrong = await listTools(gw, 'not-a-key');
    expect(wrong.statusCode).toBe(401);
    expect(reasonOf(wrong)).toBe('malformed');
  });

  it('a token whose caller id is an API key\'s id is refused: it cannot read that key\'s call records or act as it', async () => {
    const res = await listTools(gw, await idp.mint({ sub: 'agent-1', tools: ['*'] }));
    expect(res.statusCode).toBe(401);
    expect(reasonOf(res)).toBe('invalid_claims');
    expect(res.json().error.message).toMatch(/is the id of an API key/);
  });

  it('a second issuer is verified against its own keys, claims mapping and defaults', async () => {
    const token = await idp2.mint({ sub: 'svc', client_id: 'batch-job', realm_access: { roles: ['agent'] } });
    expect(toolNames(await listTools(gw, token))).toEqual(['files.read']); // defaultTools
    expect((await gw.call('files.read', {}, { key: token })).statusCode).toBe(200);
    const [rec] = (await gw.audit()).filter((r) => r['caller'] === 'batch-job');
    expect(rec).toBeDefined();
    // idp2's token with idp's iss is checked against idp's keys only: refused.
    const forged = await idp2.mint({ iss: idp.url, aud: idp.audience, tools: ['*'] });
    const res = await listTools(gw, forged);
    expect(res.statusCode).toBe(401);
    expect(['unknown_key_id', 'algorithm_not_allowed', 'bad_signature']).toContain(reasonOf(res));
  });

  it('a verified token is cached: repeat calls neither refetch keys nor re-verify, and the raw token is kept off the caller', async () => {
    const token = await idp.mint({ sub: 'dave', tools: ['weather.*'] });
    expect((await listTools(gw, token)).statusCode).toBe(200);
    const first = gw.app.gw.auth.resolve(`Bearer ${token}`);
    expect(first).not.toBeInstanceOf(Promise); // answered synchronously from the cache
    const caller = first as { id: string };
    expect(caller.id).toBe('dave');
    expect(JSON.stringify(caller)).not.toContain(token);
    expect(bearerTokenOf(caller as never)).toBe(token);
    expect(gw.app.gw.auth.oidcEnabled).toBe(true);
  });

  it('no token appears in any log line or error body', async () => {
    const good = await idp.mint({ sub: 'erin', tools: ['weather.*'] });
    const expired = await idp.mint({ sub: 'erin' }, { expiresIn: -3600 });
    const wrongAud = await idp.mint({ sub: 'erin', aud: 'https://elsewhere' });
    const bodies: string[] = [];
    for (const t of [good, expired, wrongAud]) {
      bodies.push((await gw.call('weather.now', {}, { key: t })).body);
      bodies.push((await gw.app.inject({ method: 'POST', url: '/mcp', headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' } })).body);
    }
    expect(Object.keys(JSON.parse(bodies[0] as string) as object)).not.toContain("error"); // the good token's call went through
    expect(bodies[2]).toMatch(/"reason":"expired"/);
    const everything = [...lines, ...bodies, JSON.stringify(await gw.audit())].join('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const t of [good, expired, wrongAud]) {
      expect(everything).not.toContain(t);
      expect(everything).not.toContain(t.split('.')[2]); // not even the signature
    }
  });
});
