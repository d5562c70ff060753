import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportSPKI, importJWK, SignJWT, type CryptoKey } from 'jose';
import type { TestGateway } from '../helpers/app.js';
import { TestIssuer } from '../helpers/issuer.js';
import { issuerEntry, listTools, reasonOf, startOidcGateway } from '../helpers/oidc-gateway.js';

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/**
 * Every hostile or broken token of issue 23's "Bad input" is a 401 UNAUTHENTICATED with a typed
 * reason, never a 500, and a refused token stays refused (nothing is cached from a failure).
 */
describe('OIDC bad input', () => {
  let idp: TestIssuer;
  let gw: TestGateway;

  beforeAll(async () => {
    idp = await TestIssuer.start();
    gw = await startOidcGateway([issuerEntry(idp, { defaultTools: ['*'] })]);
    // The keys are fetched once by a good token, so each case below is refused on its own merits.
    expect((await listTools(gw, await idp.mint())).statusCode).toBe(200);
  });
  afterAll(async () => {
    await gw.close();
    await idp.close();
  });

  async function refused(token: string, reason: string): Promise<string> {
    for (let i = 0; i < 2; i++) {
      const res = await listTools(gw, token);
      expect(res.statusCode).toBe(401);
      const body = res.json() as { error: { code: string; message: string } };
      expect(body.error.code).toBe('UNAUTHENTICATED');
      expect(reasonOf(res)).toBe(reason);
      expect(res.body).not.toContain(token);
      if (i === 1) return body.error.message;
    }
    return '';
  }

  it('expired', async () => {
    expect(await refused(await idp.mint({}, { expiresIn: -60 }), 'expired')).toMatch(/expired/);
  });

  it('within clockSkewSeconds of exp is still accepted', async () => {
    expect((await listTools(gw, await idp.mint({}, { expiresIn: -2 }))).statusCode).toBe(200);
  });

  it('not yet valid (nbf in the future)', async () => {
    expect(await refused(await idp.mint({ nbf: Math.floor(Date.now() / 1000) + 3600 }), 'not_yet_valid')).toMatch(/not valid yet/);
  });

  it('wrong issuer: an untrusted iss, and no iss at all', async () => {
    expect(await refused(await idp.mint({ iss: 'https://evil.example' }), 'wrong_issuer')).toMatch(/not a trusted issuer/);
    await refused(await idp.mint({}, { omit: ['iss'] }), 'wrong_issuer');
  });

  it('wrong audience, and no audience', async () => {
    expect(await refused(await idp.mint({ aud: 'https://other-service.example' }), 'wrong_audience')).toMatch(/aud/);
    await refused(await idp.mint({}, { omit: ['aud'] }), 'wrong_audience');
  });

  it('no exp claim', async () => {
    await refused(await idp.mint({}, { omit: ['exp'] }), 'invalid_claims');
  });

  it('alg: none', async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ iss: idp.url, aud: idp.audience, sub: 'mallory', exp: now + 300, tools: ['*'] })}.`;
    await refused(token, 'algorithm_not_allowed');
  });

  it('HS256 signed with the issuer\'s public key as the secret (PEM and JWK forms)', async () => {
    const pub = (await importJWK(idp.publicJwk, 'RS256')) as CryptoKey;
    const pem = await exportSPKI(pub);
    const now = Math.floor(Date.now() / 1000);
    for (const secret of [pem, JSON.stringify(idp.publicJwk)]) {
      const token = await new SignJWT({ iss: idp.url, aud: idp.audience, sub: 'mallory', exp: now + 300, tools: ['*'] })
        .setProtectedHeader({ alg: 'HS256', kid: idp.publicJwk.kid as string })
        .sign(new TextEncoder().encode(secret));
      await refused(token, 'algorithm_not_allowed');
    }
  });

  it('a 100 KB token is refused as too large', async () => {
    const token = await idp.mint({ pad: 'x'.repeat(100_000) });
    expect(token.length).toBeGreaterThan(100_000);
    expect(await refused(token, 'token_too_large')).toMatch(/longer than/);
  });

  it('a roles claim of the wrong type, and a tools claim of the wrong type', async () => {
    expect(await refused(await idp.mint({ roles: { admin: true } }), 'invalid_claims')).toMatch(/roles claim 'roles' must be an array of strings/);
    await refused(await idp.mint({ roles: ['agent', 7] }), 'invalid_claims');
    await refused(await idp.mint({ tools: 42 }), 'invalid_claims');
  });

  it('a typ that is not an access token, a tampered payload, and garbage', async () => {
    await refused(await idp.mint({}, { typ: 'dpop+jwt' }), 'wrong_type');
    const [h, , s] = (await idp.mint({ tools: ['weather.*'] })).split('.');
    await refused(`${h}.${b64({ iss: idp.url, aud: idp.audience, sub: 'x', exp: 4102444800, tools: ['*'] })}.${s}`, 'bad_signature');
    await refused('eyJ.eyJ.abc', 'malformed');
    await refused('a.b.c', 'malformed');
    await refused(`${b64({ alg: 'RS256' })}.${Buffer.from('[1,2]').toString('base64url')}.sig`, 'malformed');
  });

  it('an unknown kid', async () => {
    expect(await refused(await idp.mint({}, { kid: 'no-such-kid' }), 'unknown_key_id')).toMatch(/kid/);
  });
});
