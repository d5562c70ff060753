import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { TestGateway } from '../helpers/app.js';
import { TestIssuer } from '../helpers/issuer.js';
import { API_KEY, issuerEntry, listTools, reasonOf, startOidcGateway, toolNames } from '../helpers/oidc-gateway.js';

/**
 * Red team, issue 23: hostile access tokens against a real gateway and a real issuer. Each case
 * here held on dd5365e; they stay as regression tests of what must keep holding.
 */
describe('red team: hostile access tokens', () => {
  let idp: TestIssuer;
  let gw: TestGateway;
  let attacker: Server;
  let attackerUrl = '';
  let attackerHits = 0;
  const now = () => Math.floor(Date.now() / 1000);
  const claims = () => ({ iss: idp.url, aud: idp.audience, sub: 'mallory', exp: now() + 300, tools: ['*'], roles: ['admin', 'agent'] });

  beforeAll(async () => {
    idp = await TestIssuer.start();
    attacker = createServer((_req, res) => {
      attackerHits++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"keys":[]}');
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
    gw = await startOidcGateway([issuerEntry(idp, { algorithms: ['RS256'], scopePrefixes: { tools: 'tools:' } })]);
    expect((await listTools(gw, await idp.mint({ scope: 'tools:weather.*' }))).statusCode).toBe(200);
  });
  afterAll(async () => {
    await gw.close();
    await idp.close();
    attacker.closeAllConnections();
    await new Promise<void>((resolve) => attacker.close(() => resolve()));
  });

  async function refused(token: string, reason?: string): Promise<void> {
    const res = await listTools(gw, token);
    expect(res.statusCode, Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()).toBe(401);
    if (reason) expect(reasonOf(res)).toBe(reason);
    expect(res.body).not.toContain(token);
    expect(String(res.headers['www-authenticate'] ?? '')).not.toMatch(/[\r\n]/);
  }

  it('keys named by the token itself (jwk, jku, x5u, x5c) are never used or fetched', async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), kid: 'evil' };
    for (const header of [{ jwk }, { jku: `${attackerUrl}/jwks` }, { x5u: `${attackerUrl}/cert` }, { x5c: ['MIIB'] }]) {
      const token = await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', kid: 'evil', ...header }).sign(privateKey);
      await refused(token, 'unknown_key_id');
      // The same header under the issuer's own kid: the issuer's key decides, and it did not sign.
      const own = await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', kid: idp.kid, ...header }).sign(privateKey);
      await refused(own, 'bad_signature');
    }
    expect(attackerHits).toBe(0);
  });

  it('another algorithm of the same RSA key (PS256), and a crit header, are refused even when the issuer signed them', async () => {
    await refused(await idp.mint(claims(), { alg: 'PS256' }).catch(() => 'x.y.z'));
    const crit = await idp.signRaw(JSON.stringify({ alg: 'RS256', kid: idp.kid, crit: ['x-must'], 'x-must': 1 }), JSON.stringify(claims()));
    await refused(crit);
    const b64false = await idp.signRaw(JSON.stringify({ alg: 'RS256', kid: idp.kid, crit: ['b64'], b64: false }), JSON.stringify(claims()));
    await refused(b64false);
  });

  it('a kid with path traversal or 10 KB is an unknown key, not echoed', async () => {
    for (const kid of ['../../../../etc/passwd', 'k'.repeat(10_000), 'a\r\nSet-Cookie: x=1']) {
      const token = await idp.signRaw(JSON.stringify({ alg: 'RS256', kid }), JSON.stringify(claims()));
      const res = await listTools(gw, token);
      expect(res.statusCode).toBe(401);
      expect(res.body).not.toContain('etc/passwd');
      expect(res.body).not.toContain('kkkkkkkkkk');
      expect(String(res.headers['www-authenticate'])).not.toMatch(/[\r\n]|Set-Cookie: x/);
    }
  });

  it('exp, nbf or iat of the wrong type, a missing or non-string sub, an iss with a trailing slash or in upper case', async () => {
    const sign = (c: Record<string, unknown>) => idp.signRaw(JSON.stringify({ alg: 'RS256', kid: idp.kid }), JSON.stringify(c));
    await refused(await sign({ ...claims(), exp: String(now() + 300) }), 'invalid_claims');
    await refused(await sign({ ...claims(), nbf: String(now() - 10) }), 'invalid_claims'); // was not_yet_valid on dd5365e
    await refused(await sign({ ...claims(), iat: String(now()) }), 'invalid_claims');
    await refused(await sign({ ...claims(), exp: null }), 'invalid_claims');
    // A huge exp is the issuer's word (signed): accepted, and still kept at most tokenCache's 5 min.
    expect((await listTools(gw, await sign({ ...claims(), exp: 1e301 }))).statusCode).toBe(200);
    const { sub: _sub, ...noSub } = claims();
    await refused(await sign(noSub), 'invalid_claims');
    await refused(await sign({ ...claims(), sub: 42 }), 'invalid_claims');
    await refused(await sign({ ...claims(), sub: ['a'] }), 'invalid_claims');
    await refused(await sign({ ...claims(), iss: `${idp.url}/` }), 'wrong_issuer');
    await refused(await sign({ ...claims(), iss: idp.url.toUpperCase() }), 'wrong_issuer');
  });

  it('duplicate keys are read as the last one everywhere (the gateway picks the issuer by the same value it verifies)', async () => {
    // The first iss is trusted, the last one is not: the token must be refused, not verified against the first.
    const raw = `{"iss":${JSON.stringify(idp.url)},"aud":${JSON.stringify(idp.audience)},"sub":"m","exp":${now() + 300},"iss":"https://evil.example"}`;
    await refused(await idp.signRaw(JSON.stringify({ alg: 'RS256', kid: idp.kid }), raw), 'wrong_issuer');
    // A header whose last alg is not allowed.
    await refused(await idp.signRaw(`{"alg":"RS256","kid":${JSON.stringify(idp.kid)},"alg":"none"}`, JSON.stringify(claims())), 'algorithm_not_allowed');
  });

  it('prototype keys in claims give nothing: __proto__ and constructor are plain names', async () => {
    const raw = `{"iss":${JSON.stringify(idp.url)},"aud":${JSON.stringify(idp.audience)},"sub":"proto","exp":${now() + 300},"__proto__":{"tools":["*"],"roles":["admin"]},"constructor":{"prototype":{"admin":true}}}`;
    const res = await listTools(gw, await idp.signRaw(JSON.stringify({ alg: 'RS256', kid: idp.kid }), raw));
    expect(res.statusCode).toBe(200);
    expect(toolNames(res)).toEqual([]); // defaultTools: nothing
    const admin = await gw.app.inject({ method: 'GET', url: '/admin/reload', headers: { authorization: `Bearer ${await idp.signRaw(JSON.stringify({ alg: 'RS256', kid: idp.kid }), raw)}` } });
    expect(admin.statusCode).toBe(403);
  });

  it('a role scope does nothing without scopePrefixes.roles; a tools:* scope is every tool, as the issuer granted it', async () => {
    const t = await idp.mint({ scope: 'role:admin admin tools:*' });
    const admin = await gw.app.inject({ method: 'GET', url: '/admin/reload', headers: { authorization: `Bearer ${t}` } });
    expect(admin.statusCode).toBe(403);
    expect(toolNames(await listTools(gw, t))).toEqual(['files.read', 'weather.now', 'weather.week']);
  });

  it('an aud array naming the gateway among others is accepted (RFC 9068 asks only that it names this resource)', async () => {
    expect((await listTools(gw, await idp.mint({ aud: ['https://other.example', idp.audience] }))).statusCode).toBe(200);
    await refused(await idp.mint({ aud: ['https://other.example', `${idp.audience}/`] }), 'wrong_audience');
  });

  it('the bearer scheme in any case is accepted; a token in the query string or another scheme is not', async () => {
    const t = await idp.mint({ scope: 'tools:weather.*' });
    for (const h of [`bearer ${t}`, `BEARER ${t}`, `Bearer   ${t}  `]) {
      expect((await gw.app.inject({ method: 'GET', url: '/v1/tools', headers: { authorization: h } })).statusCode).toBe(200);
    }
    for (const h of [`Basic ${t}`, `Bearer${t}`, `Bearer ${t} extra`, `Token ${t}`]) {
      expect((await gw.app.inject({ method: 'GET', url: '/v1/tools', headers: { authorization: h } })).statusCode).toBe(401);
    }
    for (const url of [`/v1/tools?access_token=${t}`, `/mcp?access_token=${t}`]) {
      expect((await gw.app.inject({ method: url.startsWith('/mcp') ? 'POST' : 'GET', url, payload: url.startsWith('/mcp') ? { jsonrpc: '2.0', id: 1, method: 'tools/list' } : undefined })).statusCode).toBe(401);
    }
  });

  it('a sender-constrained token (cnf: DPoP or mTLS) is refused: no proof of possession is checked, so as a bearer it would lose its binding', async () => {
    await refused(await idp.mint({ cnf: { jkt: '0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I' } }), 'wrong_type');
    await refused(await idp.mint({ cnf: { 'x5t#S256': 'bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2' } }), 'wrong_type');
  });

  it('an API key stays an API key, and a JWT-shaped API key is not sent to verification', async () => {
    expect((await listTools(gw, API_KEY)).statusCode).toBe(200);
  });

  it('two Authorization lines are refused (Node keeps the first; a proxy in front may have judged the other)', async () => {
    const base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = new URL(base);
    const good = await idp.mint({ scope: 'tools:weather.*' });
    const raw = (lines: string[]) =>
      new Promise<string>((resolve, reject) => {
        const sock = connect(Number(port), '127.0.0.1', () => sock.end([...lines, 'Connection: close', '', ''].join('\r\n')));
        let out = '';
        sock.on('data', (d) => (out += d.toString()));
        sock.on('end', () => resolve(out));
        sock.on('error', reject);
      });
    const one = await raw(['GET /v1/tools HTTP/1.1', 'Host: 127.0.0.1', `Authorization: Bearer ${good}`]);
    expect(one).toMatch(/^HTTP\/1\.1 200/);
    const two = await raw(['GET /v1/tools HTTP/1.1', 'Host: 127.0.0.1', `Authorization: Bearer ${good}`, 'Authorization: Bearer someone-else']);
    expect(two).toMatch(/^HTTP\/1\.1 (400|401)/);
    expect(two).not.toContain(good);
  });
});
