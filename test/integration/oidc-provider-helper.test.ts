import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { startIssuer, type TestIssuer } from '../helpers/oidc-provider.js';

const RESOURCE = 'http://127.0.0.1:9/';
const OTHER = 'http://127.0.0.1:8/';

/** The test issuer itself: what the end-to-end tests rely on (real JWTs, PKCE enforced, DCR). */
describe('test issuer (oidc-provider)', () => {
  let iss: TestIssuer;
  beforeAll(async () => {
    iss = await startIssuer({ resources: [RESOURCE, OTHER], scopes: ['tools:call'] });
  });
  afterAll(async () => iss?.close());

  it('mints RS256 JWT access tokens for the resource, with the user\'s roles and tools', async () => {
    const jwks = createRemoteJWKSet(new URL(`${iss.issuer}/jwks`));
    const alice = await iss.tokenFor('alice', { scope: 'openid tools:call' });
    const { payload, protectedHeader } = await jwtVerify(alice, jwks, { issuer: iss.issuer, audience: RESOURCE });
    expect(protectedHeader.alg).toBe('RS256');
    expect(payload).toMatchObject({ sub: 'alice', roles: ['agent', 'approver'], tools: ['*'], scope: 'tools:call' });
    const bob = await iss.tokenFor('bob');
    expect((await jwtVerify(bob, jwks, { issuer: iss.issuer, audience: RESOURCE })).payload).toMatchObject({ sub: 'bob', tools: ['weather.*'] });
    const other = await iss.tokenFor('alice', { resource: OTHER });
    expect((await jwtVerify(other, jwks, { issuer: iss.issuer })).payload.aud).toBe(OTHER);
    expect(iss.logins.map((l) => l.user)).toEqual(['alice', 'bob', 'alice']);
  });

  it('advertises registration and S256 only, and refuses an authorization request without PKCE', async () => {
    const meta = (await (await fetch(`${iss.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(meta['registration_endpoint']).toBe(`${iss.issuer}/reg`);
    expect(meta['code_challenge_methods_supported']).toEqual(['S256']);
    const reg = (await (await fetch(`${iss.issuer}/reg`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:1/cb'], application_type: 'native', token_endpoint_auth_method: 'none' }) })).json()) as { client_id: string };
    const url = new URL(`${iss.issuer}/auth`);
    for (const [k, v] of Object.entries({ client_id: reg.client_id, redirect_uri: 'http://127.0.0.1:1/cb', response_type: 'code', scope: 'openid', resource: RESOURCE }))
      url.searchParams.set(k, v);
    const back = await iss.follow(url, 'http://127.0.0.1:1/cb');
    expect(back.searchParams.get('error')).toBe('invalid_request');
    expect(back.searchParams.get('error_description')).toMatch(/PKCE/);
    expect(back.searchParams.get('code')).toBeNull();
  });
});
