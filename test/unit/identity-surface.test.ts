import { describe, expect, it } from 'vitest';
import { callerKey, samePerson, type Caller, type TokenIdentity } from '../../src/auth/caller.js';
import { defaultAudiences, metadataDocument, protectedResource } from '../../src/auth/resource.js';
import { callerFromSnapshot, snapshotOf } from '../../src/confirm/asker.js';
import { attachToken, bearerTokenOf } from '../../src/auth/token-vault.js';

const identity = (issuer: string, subject: string, clientId?: string): TokenIdentity => ({ issuer, subject, ...(clientId ? { clientId } : {}), scopes: [], audience: [], expiresAt: 0 });
const caller = (id: string, id2?: TokenIdentity): Caller => ({ id, roles: new Set(['agent']), toolPatterns: [/^/], toolGlobs: ['*'], ...(id2 ? { identity: id2 } : {}) });

describe('who is the same person', () => {
  it('token callers by issuer and subject, whatever their client or caller id', () => {
    expect(samePerson(caller('cli-a', identity('https://i', 'u1', 'cli-a')), caller('cli-b', identity('https://i', 'u1', 'cli-b')))).toBe(true);
    expect(samePerson(caller('u1', identity('https://i', 'u1')), caller('u1', identity('https://j', 'u1')))).toBe(false);
    expect(samePerson(caller('u1', identity('https://i', 'u1')), caller('u2', identity('https://i', 'u2')))).toBe(false);
  });
  it('a key and a token are never the same person, even with one id; two keys compare by id', () => {
    expect(samePerson(caller('alice'), caller('alice', identity('https://i', 'alice')))).toBe(false);
    expect(samePerson(caller('alice', identity('https://i', 'alice')), caller('alice'))).toBe(false);
    expect(samePerson(caller('k1'), caller('k1'))).toBe(true);
    expect(samePerson(caller('k1'), caller('k2'))).toBe(false);
  });
  it('state keys: a token id is qualified by its issuer (no API key id can be one)', () => {
    expect(callerKey(caller('k1'))).toBe('k1');
    expect(callerKey(caller('u1', identity('https://i', 'u1')))).not.toBe(callerKey(caller('u1', identity('https://j', 'u1'))));
    expect(callerKey(caller('u1', identity('https://i', 'u1')))).not.toBe('u1');
  });
});

describe('a confirmation\'s snapshot of a token caller', () => {
  it('keeps id, roles, globs and identity, never the token, and runs as the same caller', () => {
    const c: Caller = { ...caller('u1', identity('https://i', 'u1', 'app')), roles: new Set(['agent', 'approver']), toolGlobs: ['weather.*'], toolPatterns: [/^weather\..*$/] };
    attachToken(c, 'eyJhbGciOi.secret-token.sig');
    const snap = snapshotOf(c);
    expect(JSON.stringify(snap)).not.toContain('secret-token');
    const back = callerFromSnapshot(JSON.parse(JSON.stringify(snap)) as NonNullable<typeof snap>);
    expect([...back.roles]).toEqual(['agent', 'approver']);
    expect(back.toolPatterns.some((re) => re.test('weather.now'))).toBe(true);
    expect(back.toolPatterns.some((re) => re.test('files.read'))).toBe(false);
    expect(back.identity).toEqual(c.identity);
    expect(bearerTokenOf(back)).toBeUndefined();
  });
  it('an API-key caller has no snapshot (it is looked up by id at approval)', () => {
    expect(snapshotOf(caller('k1'))).toBeUndefined();
  });
});

describe('the protected resource', () => {
  const cfg = (publicUrl: string | undefined, mode: 'keys' | 'none' = 'keys') =>
    ({ server: publicUrl === undefined ? {} : { publicUrl }, auth: { mode, keys: [], oidc: [{ issuer: 'https://idp/', requiredScopes: ['a', 'b'] }, { issuer: 'https://idp2', requiredScopes: ['b'] }] } }) as never;
  it('audiences by default: the resource as clients write it', () => {
    expect(defaultAudiences('https://gw.example/')).toEqual(['https://gw.example', 'https://gw.example/', 'https://gw.example/mcp']);
    expect(defaultAudiences('https://gw.example/base')).toEqual(['https://gw.example/base', 'https://gw.example/base/', 'https://gw.example/base/mcp']);
  });
  it('metadata from the config alone: publicUrl trimmed, issuers as written, scopes once each', () => {
    const pr = protectedResource(cfg('https://gw.example//'));
    expect(pr?.metadataUrl).toBe('https://gw.example/.well-known/oauth-protected-resource');
    expect(metadataDocument({ ...pr!, resource: pr!.resource! }, '')).toMatchObject({ resource: 'https://gw.example', authorization_servers: ['https://idp/', 'https://idp2'], scopes_supported: ['a', 'b'] });
    expect(protectedResource(cfg(undefined))?.metadataUrl).toBeUndefined();
    expect(protectedResource(cfg('https://gw.example', 'none'))).toBeUndefined();
  });
});
