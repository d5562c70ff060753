import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

/** The compiled `toolgate check` (npm test builds dist/ first) run as a CI job would run it. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = 'dist/cli/check.js';

function run(args: string[], extraEnv: Record<string, string> = {}) {
  const env: Record<string, string> = { PATH: process.env['PATH'] ?? '', ...extraEnv };
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, env, encoding: 'utf8', timeout: 15000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface Problem {
  file: string;
  line?: number;
  path: string;
  message: string;
}
interface Report {
  ok: boolean;
  errors: Problem[];
  warnings: (Problem & { rule: string })[];
  tools: { name: string; backends: { id: string; kind: string }[]; gated: boolean | string; roles: string[] | null }[];
}

describe('toolgate check (compiled, as a child process)', () => {
  beforeAll(() => {
    if (!existsSync(`${ROOT}${CLI}`)) spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  });

  it('the repository tools.d: exit 0, the three example tools listed', () => {
    const r = run([]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ {2}debug\.delay +builtin\(builtin\) +none +not gated +visibility: all roles +timeout 2000 ms +tools\.d\/delay\.yaml$/m);
    expect(r.stdout).toMatch(/^ {2}debug\.echo +builtin\(builtin\) .* tools\.d\/echo\.yaml$/m);
    expect(r.stdout).toMatch(/^ {2}gateway\.status +self\(http\) +read .* tools\.d\/gateway-status\.yaml$/m);
    // A clean checkout: one warning, the one a user must know before exposing the gateway.
    expect(r.stdout).toMatch(/^OK: 0 error\(s\), 1 warning\(s\), 3 tool\(s\)$/m);
    expect(r.stdout.split('\n').filter((l) => l.startsWith('warning:'))).toEqual([
      "warning: config/gateway.yaml:7: /auth/keys: no API key is configured (keys 'agent-1' (AGENT_KEY), 'ops' (OPS_KEY) skipped: variable unset): serving on loopback only, every local caller acts with all roles [config]",
    ]);
  });

  it('the repository config: only keys that load count as seeing every tool, and a key with no tools list is named as such', () => {
    const lines = (env: Record<string, string>) => run([], env).stdout.split('\n').filter((l) => l.startsWith('warning:'));
    const one = lines({ AGENT_KEY: 'a-key' });
    expect(one).toContain("warning: config/gateway.yaml:7: /auth/keys: auth key 'ops' (OPS_KEY) has no key (the environment variable is unset): skipped [config]");
    expect(one).toContain('warning: tools.d/echo.yaml:1: /visibility/roles: tool \'debug.echo\' is visible to every key: no visibility.roles and key \'agent-1\' has tools ["*"] [visible-to-all]');
    expect(one.join('\n')).not.toMatch(/'ops'.*visible|visible.*'ops'/);
    const both = lines({ AGENT_KEY: 'a-key', OPS_KEY: 'o-key' });
    expect(both.filter((l) => l.includes('[config]'))).toEqual([]);
    expect(both).toContain(
      'warning: tools.d/echo.yaml:1: /visibility/roles: tool \'debug.echo\' is visible to every key: no visibility.roles and key \'agent-1\' has tools ["*"] and key \'ops\' (no tools list: the default is ["*"]) sees every tool [visible-to-all]',
    );
  });

  it('--json on the repository tools.d: one parseable document', () => {
    const r = run(['check', '--json', '--config', 'config/gateway.yaml', '--tools-dir', 'tools.d']);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.ok).toBe(true);
    expect(report.errors).toEqual([]);
    expect(report.tools.map((t) => t.name)).toEqual(['debug.delay', 'debug.echo', 'gateway.status']);
    expect(report.tools.find((t) => t.name === 'gateway.status')?.backends).toEqual([{ id: 'self', kind: 'http' }]);
    expect(report.warnings.every((w) => typeof w.rule === 'string' && typeof w.file === 'string')).toBe(true);
  });

  it('a broken tools.d: exit 1, each problem printed as file:line: path: message', () => {
    const text = run(['--tools-dir', 'test/fixtures/check/broken']);
    expect(text.code).toBe(1);
    const json = run(['--tools-dir', 'test/fixtures/check/broken', '--json']);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as Report;
    expect(report.ok).toBe(false);
    expect(report.errors.length).toBe(8);
    for (const p of report.errors) {
      expect(p.line, p.file).toBeGreaterThan(0);
      expect(text.stdout).toContain(`\n${p.file}:${p.line}: ${p.path || '/'}: ${p.message}\n`);
    }
    expect(text.stdout).toContain("test/fixtures/check/broken/unknown-key.yaml:5: /colour: unknown key 'colour'\n");
    expect(report.tools.map((t) => t.name)).toEqual(['broken.fine', 'broken.twice']);
    expect(text.stdout).toMatch(/^FAILED: 8 error\(s\)/m);
  });

  it('a risky tools.d: exit 0 with warnings, and no secret value in the output', () => {
    const r = run(['--config', 'test/fixtures/check/risky/gateway.yaml', '--tools-dir', 'test/fixtures/check/risky/tools.d', '--json']);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    expect(new Set(report.warnings.map((w) => w.rule))).toEqual(new Set(['confirm-off', 'visible-to-all', 'inline-secret', 'default-timeout', 'mcp-no-include']));
    expect(r.stdout).not.toMatch(/sk-live|abc123|hunter2|ghp_literal|literal-key/);
  });

  it('usage errors exit 2 with the usage on stderr; --help exits 0', () => {
    const bad = run(['--frobnicate']);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/unknown option --frobnicate[\s\S]*usage: toolgate check/);
    expect(run(['--config']).code).toBe(2);
    const help = run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: toolgate check/);
  });
});
