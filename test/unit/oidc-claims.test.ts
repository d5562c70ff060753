import { describe, expect, it } from 'vitest';
import { Value } from '@sinclair/typebox/value';
import { ConfigSchema, type OidcIssuerConfig } from '../../src/config/schema.js';
import { callerFromClaims, claimAt } from '../../src/auth/oidc/claims.js';
import { GatewayError } from '../../src/errors.js';
import { TokenCache } from '../../src/auth/token-cache.js';
import { oidcProblems } from '../../src/auth/oidc/config-problems.js';

/** An issuer entry with the schema's defaults filled in. */
function issuer(extra: Record<string, unknown> = {}): OidcIssuerConfig {
  const config = Value.Default(ConfigSchema, { auth: { oidc: [{ issuer: 'https://idp.example', audience: 'https://gw', ...extra }] } }) as { auth: { oidc: OidcIssuerConfig[] } };
  return config.auth.oidc[0] as OidcIssuerConfig;
}

function reason(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    if (e instanceof GatewayError) return e.details[0]?.['reason'] as string;
    throw e;
  }
  return undefined;
}

describe('claims → caller', () => {
  const base = { iss: 'https://idp.example', sub: 'u1', aud: 'https://gw', exp: 2000000000 };

  it('id, roles and tools from their claims; identity from the registered ones', () => {
    const c = callerFromClaims({ ...base, roles: ['agent', 'approver'], tools: ['weather.*'], azp: 'spa', scope: 'openid profile' }, issuer());
    expect(c.id).toBe('u1');
    expect([...c.roles].sort()).toEqual(['agent', 'approver']);
    expect(c.toolGlobs).toEqual(['weather.*']);
    expect(c.toolPatterns.some((re) => re.test('weather.now'))).toBe(true);
    expect(c.identity).toEqual({ issuer: 'https://idp.example', subject: 'u1', clientId: 'spa', scopes: ['openid', 'profile'], audience: ['https://gw'], expiresAt: 2000000000 });
  });

  it('space-separated strings, unknown role names ignored, client_id before azp', () => {
    const c = callerFromClaims({ ...base, roles: 'agent root superuser', tools: 'a.* b.x', client_id: 'cli', azp: 'other' }, issuer());
    expect([...c.roles]).toEqual(['agent']);
    expect(c.toolGlobs).toEqual(['a.*', 'b.x']);
    expect(c.identity?.clientId).toBe('cli');
  });

  it('absent claims take the defaults; a present but empty roles claim gives no role', () => {
    const d = callerFromClaims(base, issuer({ defaultRoles: ['agent'], defaultTools: ['pub.*'] }));
    expect([...d.roles]).toEqual(['agent']);
    expect(d.toolGlobs).toEqual(['pub.*']);
    expect([...callerFromClaims({ ...base, roles: [] }, issuer()).roles]).toEqual([]);
    expect(callerFromClaims(base, issuer()).toolGlobs).toEqual([]); // default defaultTools: sees nothing
  });

  it('dotted paths (Keycloak) and namespaced claim names with dots (Auth0)', () => {
    expect(claimAt({ realm_access: { roles: ['agent'] } }, 'realm_access.roles')).toEqual(['agent']);
    expect(claimAt({ 'https://acme.example/roles': ['admin'] }, 'https://acme.example/roles')).toEqual(['admin']);
    expect(claimAt({ a: ['x'] }, 'a.length')).toBeUndefined(); // no walking into arrays or prototypes
    expect(claimAt({ a: {} }, 'a.constructor')).toBeUndefined();
    const c = callerFromClaims({ ...base, realm_access: { roles: ['admin'] } }, issuer({ claims: { roles: 'realm_access.roles' } }));
    expect([...c.roles]).toEqual(['admin']);
  });

  it('scope prefixes add tool globs and roles, from scope or scp (string or array)', () => {
    const cfg = issuer({ scopePrefixes: { tools: 'tools:', roles: 'role:' } });
    const a = callerFromClaims({ ...base, scope: 'openid tools:weather.* role:approver tools:' }, cfg);
    expect(a.toolGlobs).toEqual(['weather.*']);
    expect([...a.roles]).toEqual(['approver']);
    const b = callerFromClaims({ ...base, scp: ['tools:files.read'], tools: ['x.*'] }, cfg);
    expect(b.toolGlobs).toEqual(['x.*', 'files.read']);
    expect([...b.roles]).toEqual(['agent']); // no role scope, no roles claim: defaults
  });

  it('the id from another claim (client_id for machine tokens)', () => {
    expect(callerFromClaims({ ...base, client_id: 'batch' }, issuer({ claims: { id: 'client_id' } })).id).toBe('batch');
  });

  it('wrong types are refused with invalid_claims', () => {
    const cfg = issuer();
    expect(reason(() => callerFromClaims({ ...base, roles: 5 }, cfg))).toBe('invalid_claims');
    expect(reason(() => callerFromClaims({ ...base, roles: { admin: true } }, cfg))).toBe('invalid_claims');
    expect(reason(() => callerFromClaims({ ...base, roles: ['agent', null] }, cfg))).toBe('invalid_claims');
    expect(reason(() => callerFromClaims({ ...base, tools: true }, cfg))).toBe('invalid_claims');
    expect(reason(() => callerFromClaims({ ...base, scope: 7 }, cfg))).toBe('invalid_claims');
    expect(reason(() => callerFromClaims({ ...base, sub: 12 }, cfg))).toBe('invalid_claims');
    expect(reason(() => callerFromClaims({ ...base, sub: '' }, cfg))).toBe('invalid_claims');
    expect(reason(() => callerFromClaims({ aud: 'x' }, cfg))).toBe('invalid_claims');
  });
});

describe('token cache', () => {
  const caller = (exp: number) => ({ id: 'x', roles: new Set<never>(), toolPatterns: [], identity: { issuer: 'i', subject: 's', scopes: [], audience: [], expiresAt: exp } });

  it('keeps an entry until its exp or the max age, whichever is sooner, and drops the oldest when full', () => {
    let now = 1_000_000;
    const cache = new TokenCache(2, 60_000, () => now);
    cache.set('a', caller(1_000 + 30)); // exp in 30 s
    cache.set('b', caller(0)); // no exp: max age
    expect(cache.get('a')?.id).toBe('x');
    now += 31_000;
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBeDefined();
    now += 30_000;
    expect(cache.get('b')).toBeUndefined();
    cache.set('c', caller(0));
    cache.set('d', caller(0));
    cache.set('e', caller(0));
    expect(cache.size).toBe(2);
    expect(cache.get('c')).toBeUndefined();
    cache.set('gone', caller(1)); // already expired: not stored
    expect(cache.get('gone')).toBeUndefined();
  });
});

describe('auth.oidc config problems', () => {
  const cfg = (oidc: Record<string, unknown>[], server: Record<string, unknown> = {}) =>
    Value.Default(ConfigSchema, { server, auth: { oidc } }) as Parameters<typeof oidcProblems>[0];

  it('an issuer with neither audience nor server.publicUrl is refused with a clear message', () => {
    const [p] = oidcProblems(cfg([{ issuer: 'https://idp.example' }]));
    expect(p?.path).toBe('/auth/oidc/0/audience');
    expect(p?.message).toMatch(/no audience: set its audience .* or server\.publicUrl/);
    expect(oidcProblems(cfg([{ issuer: 'https://idp.example' }], { publicUrl: 'https://gw.example' }))).toEqual([]);
  });

  it('plain http only to loopback; no duplicates; no query in an issuer', () => {
    const ps = oidcProblems(cfg([
      { issuer: 'http://idp.example', audience: 'a' },
      { issuer: 'http://127.0.0.1:8080', audience: 'a', jwksUri: 'http://keys.example/jwks' },
      { issuer: 'http://127.0.0.1:8080', audience: 'a' },
      { issuer: 'https://idp.example/?x=1', audience: 'a' },
    ]));
    expect(ps.map((p) => p.path)).toEqual(['/auth/oidc/0/issuer', '/auth/oidc/1/jwksUri', '/auth/oidc/2/issuer', '/auth/oidc/3/issuer']);
  });
});
