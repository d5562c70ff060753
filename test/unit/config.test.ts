import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/load.js';

function configFile(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-config-'));
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, text);
  return file;
}

function problemsOf(fn: () => unknown) {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  throw new Error('expected a ConfigError');
}

describe('config loading', () => {
  it('fills every default of SPEC §1 from an empty file', () => {
    const { config } = loadConfig({ file: configFile('{}\n'), env: {} });
    expect(config.server).toMatchObject({ host: '127.0.0.1', port: 8080, bodyLimitBytes: 1048576 });
    expect(config.auth).toEqual({ mode: 'keys', keys: [], oidc: [] });
    expect(config.audit).toEqual({ file: 'data/audit.jsonl' });
    expect(config.confirmations).toMatchObject({ ttlSeconds: 900, fourEyes: true });
    expect(config.defaults.timeoutMs).toEqual({ builtin: 5000, http: 30000, mcp: 30000 });
    expect(config.limits).toMatchObject({ loopRepeats: 3, loopWindowSeconds: 120 });
    expect(config.state.redis).toBeUndefined();
    expect(Object.isFrozen(config.server)).toBe(true);
  });

  it('loads the shipped config/gateway.yaml', () => {
    const { config, warnings } = loadConfig({ file: 'config/gateway.yaml', env: {} });
    expect(config.server.port).toBe(8080);
    expect(config.auth.keys).toEqual([]); // its keys come from unset variables
    expect(warnings.join('\n')).toContain('loopback only');
  });

  it('expands ${env:NAME} anywhere and records the values as secrets', () => {
    const file = configFile('auth: { keys: [ { id: a, key: "${env:K}", roles: [agent] } ] }\naudit: { file: "${env:DIR}/audit.jsonl" }\n');
    const loaded = loadConfig({ file, env: { K: 'super-secret-key', DIR: '/var/log/tg' } });
    expect(loaded.config.auth.keys[0]?.key).toBe('super-secret-key');
    expect(loaded.config.audit.file).toBe('/var/log/tg/audit.jsonl');
    expect(loaded.secrets.has('super-secret-key')).toBe(true);
  });

  it('applies PORT, HOST, REDIS_URL and TOOLGATE_TOOLS_DIR over the file', () => {
    const { config } = loadConfig({
      file: configFile('server: { port: 9000 }\nauth: { mode: none }\n'),
      env: { PORT: '9100', HOST: '0.0.0.0', REDIS_URL: 'redis://127.0.0.1:6399', TOOLGATE_TOOLS_DIR: '/srv/tools.d' },
    });
    expect(config.server).toMatchObject({ port: 9100, host: '0.0.0.0' });
    expect(config.state.redis).toBe('redis://127.0.0.1:6399');
    expect(config.tools.dir).toBe('/srv/tools.d');
  });

  it('reads TOOLGATE_CONFIG when no file is given', () => {
    const file = configFile('server: { port: 9300 }\n');
    expect(loadConfig({ env: { TOOLGATE_CONFIG: file } }).config.server.port).toBe(9300);
    expect(problemsOf(() => loadConfig({ env: { TOOLGATE_CONFIG: '/nope/gateway.yaml' } }))[0]?.message).toContain('not found');
  });

  it('lists every problem with file, line and JSON path', () => {
    const file = 'test/fixtures/config/bad.yaml';
    const problems = problemsOf(() => loadConfig({ file, env: {} }));
    const byPath = Object.fromEntries(problems.map((p) => [p.path, p]));
    expect(byPath['/server/port']).toMatchObject({ file, line: 3 });
    expect(byPath['/auth/keys/0/roles/1']).toMatchObject({ file, line: 7 });
    expect(byPath['/audit/colour']).toMatchObject({ file, line: 8, message: "unknown key 'colour'" });
  });

  it('reports a bad PORT from the environment by its path', () => {
    const problems = problemsOf(() => loadConfig({ file: configFile('{}'), env: { PORT: 'http' } }));
    expect(problems[0]?.path).toBe('/server/port');
  });

  it('reports YAML syntax errors with a line', () => {
    const problems = problemsOf(() => loadConfig({ file: configFile('server:\n  port: [1,\n'), env: {} }));
    expect(problems[0]?.line).toBeGreaterThan(0);
  });

  describe('secure by default', () => {
    it('refuses a non-loopback host with no key', () => {
      const problems = problemsOf(() => loadConfig({ file: configFile('server: { host: 0.0.0.0 }\n'), env: {} }));
      expect(problems[0]).toMatchObject({ path: '/server/host' });
      expect(problems[0]?.message).toContain('refusing to bind');
    });

    it('allows it with a key, or with auth mode none said outright', () => {
      const withKey = configFile('server: { host: 0.0.0.0 }\nauth: { keys: [ { id: a, key: k1234567 } ] }\n');
      expect(loadConfig({ file: withKey, env: {} }).config.auth.keys).toHaveLength(1);
      const open = configFile('server: { host: 0.0.0.0 }\nauth: { mode: none }\n');
      expect(loadConfig({ file: open, env: {} }).config.auth.mode).toBe('none');
    });

    it('skips a key whose variable is unset, so the binding rule sees no key', () => {
      const file = configFile('server: { host: 10.1.2.3 }\nauth: { keys: [ { id: a, key: "${env:MISSING}" } ] }\n');
      expect(problemsOf(() => loadConfig({ file, env: {} }))[0]?.path).toBe('/server/host');
    });

    it('rejects duplicate key ids', () => {
      const file = configFile('auth: { keys: [ { id: a, key: k1 }, { id: a, key: k2 } ] }\n');
      expect(problemsOf(() => loadConfig({ file, env: {} }))[0]).toMatchObject({ path: '/auth/keys/1/id' });
    });
  });
});
