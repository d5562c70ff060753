import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/app.js';
import { TestIssuer } from '../helpers/issuer.js';
import { issuerEntry, listTools, reasonOf, startOidcGateway, toolNames } from '../helpers/oidc-gateway.js';

/** Opaque (non-JWT) access tokens checked at the issuer's RFC 7662 introspection endpoint. */
describe('OIDC token introspection', () => {
  let idp: TestIssuer;
  let gw: TestGateway;
  const now = () => Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    idp = await TestIssuer.start();
    gw = await startOidcGateway([issuerEntry(idp, { introspection: { clientId: 'toolgate', clientSecret: 's3cr:et' }, scopePrefixes: { tools: 'tools:' } })]);
  });
  afterAll(async () => {
    await gw.close();
    await idp.close();
  });

  it('an active opaque token is the caller the answer describes, and is introspected once', async () => {
    idp.opaque.set('opaque-active-1', { active: true, sub: 'olivia', client_id: 'cli', scope: 'tools:weather.now', aud: idp.audience, iss: idp.url, exp: now() + 300 });
    const before = idp.fetches.introspection;
    const res = await listTools(gw, 'opaque-active-1');
    expect(res.statusCode).toBe(200);
    expect(toolNames(res)).toEqual(['weather.now']);
    expect((await gw.call('weather.now', {}, { key: 'opaque-active-1' })).statusCode).toBe(200);
    expect(idp.fetches.introspection - before).toBe(1);
    // Client authentication per RFC 6749 §2.3.1 (form-encoded, then Basic).
    expect(idp.introspectionAuth.at(-1)).toBe(`Basic ${Buffer.from('toolgate:s3cr%3Aet').toString('base64')}`);
  });

  it('an inactive or unknown opaque token is 401 inactive, each time (not cached)', async () => {
    idp.opaque.set('opaque-revoked', { active: false });
    for (const t of ['opaque-revoked', 'opaque-revoked', 'never-issued']) {
      const res = await listTools(gw, t);
      expect(res.statusCode).toBe(401);
      expect(reasonOf(res)).toBe('inactive');
    }
  });

  it('an active answer is still checked: expired, another audience, another issuer', async () => {
    idp.opaque.set('opaque-expired', { active: true, sub: 'x', exp: now() - 3600 });
    idp.opaque.set('opaque-aud', { active: true, sub: 'x', aud: 'https://elsewhere', exp: now() + 300 });
    idp.opaque.set('opaque-iss', { active: true, sub: 'x', iss: 'https://evil.example', exp: now() + 300 });
    expect(reasonOf(await listTools(gw, 'opaque-expired'))).toBe('expired');
    expect(reasonOf(await listTools(gw, 'opaque-aud'))).toBe('wrong_audience');
    expect(reasonOf(await listTools(gw, 'opaque-iss'))).toBe('wrong_issuer');
  });

  it('the JWT path is unchanged beside it', async () => {
    expect((await listTools(gw, await idp.mint({ scope: 'tools:files.*' }))).statusCode).toBe(200);
  });
});

describe('OIDC token introspection, endpoint down', () => {
  it('is 401 issuer_unavailable, not a 500', async () => {
    const idp = await TestIssuer.start();
    const gw = await startOidcGateway([issuerEntry(idp, { introspection: { endpoint: 'http://127.0.0.1:9/introspect', clientId: 'a', clientSecret: 'b' } })]);
    try {
      const res = await listTools(gw, 'some-opaque-token');
      expect(res.statusCode).toBe(401);
      expect(reasonOf(res)).toBe('issuer_unavailable');
      expect(res.body).not.toContain('some-opaque-token');
    } finally {
      await gw.close();
      await idp.close();
    }
  });
});
