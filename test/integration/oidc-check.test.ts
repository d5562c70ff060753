import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runCheck } from '../../src/cli/run.js';
import { formatReport } from '../../src/cli/format.js';
import { TestIssuer } from '../helpers/issuer.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A config file (and an empty tools.d) in a temp dir; returns the config path. */
function configFile(config: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-oidc-check-'));
  mkdirSync(join(dir, 'tools.d'));
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, stringify({ tools: { dir: join(dir, 'tools.d') }, audit: { file: join(dir, 'audit.jsonl') }, ...config }));
  return file;
}

/** `toolgate check` on auth.oidc: the config checks, and with --connect what each issuer serves. */
describe('toolgate check: auth.oidc', () => {
  let idp: TestIssuer;
  let impostor: TestIssuer;
  beforeAll(async () => {
    idp = await TestIssuer.start();
    impostor = await TestIssuer.start({ claimedIssuer: 'https://someone-else.example' });
  });
  afterAll(async () => {
    await idp.close();
    await impostor.close();
  });

  it('an issuer with neither audience nor server.publicUrl is an error with its line', async () => {
    const file = configFile({ auth: { oidc: [{ issuer: 'https://idp.example' }] } });
    const r = await runCheck({ config: file, env: {} });
    expect(r.ok).toBe(false);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatchObject({ path: '/auth/oidc/0/audience', line: expect.any(Number) });
    expect(r.errors[0]?.message).toMatch(/has no audience: set its audience .* or server\.publicUrl/);
  });

  it('an http issuer that is not loopback, an algorithm outside the allowed set', async () => {
    const file = configFile({ server: { publicUrl: 'https://gw.example' }, auth: { oidc: [{ issuer: 'http://idp.example', algorithms: ['HS256'] }] } });
    const r = await runCheck({ config: file, env: {} });
    expect(r.ok).toBe(false);
    const text = r.errors.map((e) => `${e.path}: ${e.message}`).join('\n');
    expect(text).toMatch(/\/auth\/oidc\/0\/algorithms\/0/);
    const file2 = configFile({ server: { publicUrl: 'https://gw.example' }, auth: { oidc: [{ issuer: 'http://idp.example' }] } });
    const r2 = await runCheck({ config: file2, env: {} });
    expect(r2.errors.map((e) => e.message)).toEqual([expect.stringMatching(/must use https/)]);
  });

  it('a good issuer is listed with its audience (server.publicUrl by default); --connect reports its discovery and keys', async () => {
    const file = configFile({ server: { publicUrl: 'https://gw.example' }, auth: { oidc: [{ issuer: idp.url }] } });
    const plain = await runCheck({ config: file, env: {} });
    expect(plain.ok).toBe(true);
    expect(plain.issuers).toEqual([{ issuer: idp.url, audience: ['https://gw.example', 'https://gw.example/', 'https://gw.example/mcp'], algorithms: ['RS256', 'ES256'], jwksUri: null, introspection: false }]);
    expect(idp.fetches.discovery).toBe(0); // no network without --connect
    const r = await runCheck({ config: file, env: {}, connectTimeoutMs: 2000 });
    expect(r.ok).toBe(true);
    expect(r.issuers[0]?.connect).toEqual({
      ok: true,
      discovery: { issuerMatches: true, jwksUri: idp.jwksUri, introspectionEndpoint: `${idp.url}/introspect` },
      jwksUri: idp.jwksUri,
      keys: 1,
      usableKeys: 1,
      keyAlgorithms: ['RS256'],
    });
    expect(formatReport(r)).toMatch(/issuers \(1\):\n {2}http:\/\/127\.0\.0\.1:\d+ +audience: https:\/\/gw\.example, https:\/\/gw\.example\/, https:\/\/gw\.example\/mcp +algorithms: RS256, ES256 +keys from discovery +discovery ok \(issuer matches\), 1 key\(s\), 1 usable \(RS256\)/);
  });

  it('--connect: a discovery document naming another issuer, keys that fit no configured algorithm, a JWKS that is down', async () => {
    const file = configFile({
      server: { publicUrl: 'https://gw.example' },
      auth: { oidc: [{ issuer: impostor.url }, { issuer: idp.url, jwksUri: idp.jwksUri, algorithms: ['ES256'] }] },
    });
    const r = await runCheck({ config: file, env: {}, connectTimeoutMs: 2000 });
    expect(r.ok).toBe(false);
    expect(r.errors.map((e) => e.path)).toEqual(['/auth/oidc/0', '/auth/oidc/1']);
    expect(r.errors[0]?.message).toMatch(/names the issuer "https:\/\/someone-else\.example"/);
    expect(r.errors[1]?.message).toMatch(/none of the 1 JWKS key\(s\) fits the configured algorithms ES256 \(the keys offer RS256\)/);
    idp.jwksMode = 'down';
    try {
      const down = await runCheck({ config: configFile({ server: { publicUrl: 'https://gw.example' }, auth: { oidc: [{ issuer: idp.url }] } }), env: {}, connectTimeoutMs: 2000 });
      expect(down.errors[0]?.message).toMatch(/JWKS .*answered HTTP 503/);
      expect(formatReport(down)).toMatch(/DOWN/);
    } finally {
      idp.jwksMode = 'ok';
    }
  });

  it('with issuers and no key, a tool is not "visible to every key" unless an issuer gives every tool by default', async () => {
    const warningsWith = async (defaultTools: string[]) => {
      const file = configFile({ server: { publicUrl: 'https://gw.example' }, auth: { oidc: [{ issuer: 'https://idp.example', defaultTools }] } });
      writeFileSync(join(file, '..', 'tools.d', 'echo.yaml'), stringify({ name: 'debug.echo', description: 'echo', sideEffect: 'none', timeoutMs: 1000, backends: [{ id: 'b', builtin: 'echo' }] }));
      const r = await runCheck({ config: file, env: {} });
      expect(r.ok).toBe(true);
      return r.warnings.filter((w) => w.rule === 'visible-to-all' || w.rule === 'config').map((w) => w.message);
    };
    expect(await warningsWith([])).toEqual([]);
    expect(await warningsWith(['*'])).toEqual([expect.stringMatching(/visible to every key: .*issuer 'https:\/\/idp\.example' has defaultTools \["\*"\]/)]);
  });

  it('the compiled CLI exits 1 on an issuer without audience', () => {
    const file = configFile({ auth: { oidc: [{ issuer: 'https://idp.example' }] } });
    const r = spawnSync(process.execPath, ['dist/cli/check.js', '--config', file], { cwd: ROOT, encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '' } });
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/\/auth\/oidc\/0\/audience: issuer 'https:\/\/idp\.example' has no audience/);
  });
});
