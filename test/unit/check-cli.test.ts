import { describe, expect, it } from 'vitest';
import { parseArgs, UsageError } from '../../src/cli/args.js';
import { formatReport } from '../../src/cli/format.js';
import { runCheck } from '../../src/cli/run.js';
import { findInlineSecrets, isLiteralSecret, isSecretName, urlSecrets } from '../../src/cli/secrets.js';
import type { CheckReport, CheckWarning, WarningRule } from '../../src/cli/types.js';
import { openToAll } from '../../src/cli/warnings.js';
import { formatProblem } from '../../src/util/source.js';

const FIX = 'test/fixtures/check';
const check = (name: string, env: Record<string, string> = {}) =>
  runCheck({ config: `${FIX}/${name}/gateway.yaml`, toolsDir: `${FIX}/${name}/tools.d`, env });
const byRule = (r: CheckReport, rule: WarningRule): CheckWarning[] => r.warnings.filter((w) => w.rule === rule);
const where = (ws: readonly CheckWarning[]) => ws.map((w) => `${w.file.replace(`${FIX}/`, '')}:${w.line ?? '-'}: ${w.path}`).sort();

describe('toolgate check: arguments', () => {
  it('reads --config, --tools-dir (both spellings) and --json', () => {
    expect(parseArgs([])).toEqual({ config: undefined, toolsDir: undefined, json: false, help: false });
    expect(parseArgs(['--config', 'a.yaml', '--tools-dir=d', '--json'])).toEqual({ config: 'a.yaml', toolsDir: 'd', json: true, help: false });
    expect(parseArgs(['--help']).help).toBe(true);
    expect(parseArgs(['check', '--json'])).toEqual({ config: undefined, toolsDir: undefined, json: true, help: false });
  });
  it.each([[['--config']], [['--tools-dir', '--json']], [['--config=']], [['--verbose']], [['tools.d']], [['--json=yes']], [['--json', 'check']]])(
    'refuses %j as a usage error',
    (argv) => {
      expect(() => parseArgs(argv)).toThrow(UsageError);
    },
  );
});

describe('toolgate check: inline secrets', () => {
  it('knows secret-like names and leaves others alone', () => {
    for (const n of ['Authorization', 'x-api-key', 'X-API-Key', 'apiKey', 'token', 'AUTH_TOKEN', 'password', 'client_secret', 'key', 'Cookie']) {
      expect(isSecretName(n), n).toBe(true);
    }
    for (const n of ['tokenizer', 'max_tokens', 'sha256', 'keys', 'url', 'X-Trace', 'description']) expect(isSecretName(n), n).toBe(false);
  });
  it('tells literals from ${env:...} and {{argument}} templates', () => {
    for (const v of ['abc123', 'Bearer abc123', 'Basic dXNlcjpwYXNz', '{{id}}-fixed']) expect(isLiteralSecret(v), v).toBe(true);
    for (const v of ['${env:TOKEN}', 'Bearer ${env:TOKEN}', '{{apiKey}}', 'Bearer {{token}}', '  ']) expect(isLiteralSecret(v), v).toBe(false);
  });
  it('finds credentials in URLs, never in templated or env ones', () => {
    expect(urlSecrets('https://api.example.com/x?api_key=abc&n=1')).toEqual(["URL query parameter 'api_key'"]);
    expect(urlSecrets('https://bot:hunter2@chat.example.com/')).toEqual(['URL password']);
    expect(urlSecrets('https://api.example.com/x?api_key=${env:K}&token={{t}}')).toEqual([]);
    expect(urlSecrets('https://user@host/x?q=token')).toEqual([]);
    expect(urlSecrets('not a url ?token=abc')).toEqual([]);
  });
  it('walks a document, skipping schemas and prose, and names where, not what', () => {
    const doc = {
      description: 'password: hunter2',
      inputSchema: { properties: { token: { type: 'string', default: 'x' } } },
      backends: [{ http: { headers: { Authorization: 'Bearer s3cr3t', 'X-Id': '{{id}}' } } }],
      env: { GH_TOKEN: 'ghp_x', OK_TOKEN: '${env:OK}' },
    };
    const found = findInlineSecrets(doc);
    expect(found).toEqual([
      { path: '/backends/0/http/headers/Authorization', what: "'Authorization'" },
      { path: '/env/GH_TOKEN', what: "'GH_TOKEN'" },
    ]);
    expect(JSON.stringify(found)).not.toMatch(/s3cr3t|ghp_x/);
  });
});

describe('toolgate check: visibility', () => {
  it('is open to all with no key, with mode none, or with a key seeing "*" (the default)', () => {
    // With no key the config warning says it once (every local caller has all roles), not once per tool.
    expect(openToAll('keys', [])).toBeUndefined();
    expect(openToAll('none', [{ id: 'a', tools: ['x.*'] }])).toBe('auth mode is none');
    expect(openToAll('keys', [{ id: 'a' }])).toBe('key \'a\' (no tools list: the default is ["*"]) sees every tool');
    expect(openToAll('keys', [{ id: 'a', tools: ['*'] }, { id: 'b' }])).toBe('key \'a\' has tools ["*"] and key \'b\' (no tools list: the default is ["*"]) sees every tool');
    expect(openToAll('keys', [{ id: 'a', tools: ['*'] }, { id: 'b', tools: ['*'] }])).toBe('keys \'a\', \'b\' have tools ["*"]');
    expect(openToAll('keys', [{ id: 'a', tools: ['weather.*'] }])).toBeUndefined();
  });
});

describe('toolgate check: fixtures', () => {
  it('a safe tools.d: no error, no warning, tools listed with gates and visibility', async () => {
    const r = await check('safe', { CHECK_AGENT_KEY: 'k' });
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.tools.map((t) => [t.name, t.backends, t.gated, t.roles, t.timeoutMs])).toEqual([
      ['safe.delete', [{ id: 'echo', kind: 'builtin' }], 'when path', ['agent'], 10000],
      ['safe.read', [{ id: 'api', kind: 'http' }], false, null, 3000],
    ]);
    expect(r.mcpServers).toEqual([{ name: 'files', file: `${FIX}/safe/tools.d/files.yaml`, transport: 'stdio', include: ['read_*', 'list_*'] }]);
  });

  it('a risky tools.d: every rule fires where the setting is, and errors stay at zero', async () => {
    const r = await check('risky');
    expect(r.ok).toBe(true);
    expect(where(byRule(r, 'confirm-off'))).toEqual([
      'risky/tools.d/delete.yaml:7: /confirm',
      'risky/tools.d/github.yaml:7: /overrides/delete_repo/confirm',
      'risky/tools.d/notify.yaml:5: /confirm',
    ]);
    expect(where(byRule(r, 'inline-secret'))).toEqual([
      'risky/gateway.yaml:4: /auth/keys/0/key',
      'risky/tools.d/delete.yaml:12: /backends/0/http/url',
      'risky/tools.d/delete.yaml:14: /backends/0/http/headers/Authorization',
      'risky/tools.d/desktop.json:3: /mcpServers/search/headers/X-API-Key',
      'risky/tools.d/github.yaml:5: /env/GITHUB_PERSONAL_ACCESS_TOKEN',
      'risky/tools.d/notify.yaml:12: /backends/0/http/url',
    ]);
    // notify.yaml has visibility.roles; delete.yaml has none and the key 'ci' sees "*".
    expect(byRule(r, 'visible-to-all').map((w) => w.message)).toEqual([
      'tool \'risky.delete\' is visible to every key: no visibility.roles and key \'ci\' (no tools list: the default is ["*"]) sees every tool',
    ]);
    expect(where(byRule(r, 'default-timeout'))).toEqual([
      'risky/tools.d/delete.yaml:1: /timeoutMs',
      'risky/tools.d/desktop.json:3: /mcpServers/search/timeoutMs',
      'risky/tools.d/github.yaml:1: /timeoutMs',
    ]);
    expect(where(byRule(r, 'mcp-no-include'))).toEqual(['risky/tools.d/desktop.json:3: /mcpServers/search/include', 'risky/tools.d/github.yaml:1: /include']);
    expect(JSON.stringify(r)).not.toMatch(/sk-live|abc123|hunter2|ghp_literal|literal-key/);
  });

  it('a broken tools.d: every problem with its file and line; the good files still load', async () => {
    const r = await runCheck({ toolsDir: `${FIX}/broken`, env: {} });
    expect(r.ok).toBe(false);
    const lines = r.errors.map(formatProblem);
    for (const l of lines) expect(l).toMatch(/^test\/fixtures\/check\/broken\/[\w-]+\.(yaml|json):\d+: \/\S*: .+$/);
    const files = new Set(r.errors.map((e) => e.file.replace(`${FIX}/broken/`, '')));
    expect([...files].sort()).toEqual(['bad-side-effect.yaml', 'dup-b.yaml', 'mcp-no-command.yaml', 'syntax.yaml', 'trailing-comma.json', 'unknown-key.yaml', 'wrong-kind.yaml']);
    expect(lines).toContain(`${FIX}/broken/unknown-key.yaml:5: /colour: unknown key 'colour'`);
    expect(r.errors.find((e) => e.file.endsWith('trailing-comma.json'))?.line).toBe(6);
    expect(r.tools.map((t) => t.name)).toEqual(['broken.fine', 'broken.twice']);
    const text = formatReport(r);
    for (const l of lines) expect(text).toContain(`\n${l}\n`);
    expect(text).toMatch(/FAILED: 8 error\(s\)/);
  });

  it('a config the server refuses: its problems, and tools.d is not loaded', async () => {
    const r = await runCheck({ config: `${FIX}/bad-config.yaml`, env: {} });
    expect(r.ok).toBe(false);
    expect(r.toolsDir).toBeNull();
    expect(r.errors.map(formatProblem)).toEqual([`${FIX}/bad-config.yaml:2: /server/port: must be <= 65535`, `${FIX}/bad-config.yaml:3: /auth/mode: must be equal to constant`]);
  });

  it('without --config, uses TOOLGATE_CONFIG like the server, and --tools-dir overrides tools.dir', async () => {
    const r = await runCheck({ toolsDir: `${FIX}/safe/tools.d`, env: { TOOLGATE_CONFIG: `${FIX}/risky/gateway.yaml` } });
    expect(r.config).toBe(`${FIX}/risky/gateway.yaml`);
    expect(r.toolsDir).toBe(`${FIX}/safe/tools.d`);
    expect(byRule(r, 'visible-to-all').map((w) => w.file)).toEqual([`${FIX}/safe/tools.d/read.yaml`]);
    const missing = await runCheck({ env: { TOOLGATE_CONFIG: `${FIX}/nope.yaml` } });
    expect(missing.errors).toEqual([{ file: `${FIX}/nope.yaml`, path: '', message: 'config file not found' }]);
  });
});
