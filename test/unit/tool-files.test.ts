import { describe, expect, it } from 'vitest';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadToolsDir, loadToolText, type LoadContext } from '../../src/tools/loader.js';
import { providerNameOf } from '../../src/tools/names.js';
import { loadConfig } from '../../src/config/load.js';

const defaults = loadConfig({ file: 'config/gateway.yaml', env: {} }).config.defaults;

function ctx(dir: string, env: Record<string, string> = {}): LoadContext {
  return { dir, env, secrets: new Set(), defaults };
}

function loadBad(name: string) {
  const file = join('test/fixtures/tools.d/bad', name);
  return loadToolText(file, readFileSync(file, 'utf8'), ctx('test/fixtures/tools.d/bad'));
}

describe('tool files', () => {
  it('loads the good fixtures with SPEC defaults', async () => {
    const reg = await loadToolsDir(ctx('test/fixtures/tools.d/good', { WEATHER_KEY: 'wk-123456' }));
    expect(reg.problems).toEqual([]);
    expect(reg.tools.map((t) => t.name)).toEqual(['debug.echo', 'files.delete', 'weather.current']);
    const weather = reg.get('weather.current')!;
    expect(weather).toMatchObject({ sideEffect: 'read', idempotent: true, confirm: false, timeoutMs: 8000, providerName: 'weather__current' });
    expect(weather.retry).toEqual({ attempts: 2, backoffMs: 100 });
    expect(weather.backends.map((b) => [b.id, b.weight, b.priority])).toEqual([['primary', 80, 0], ['backup', 20, 0]]);
    const del = reg.get('files.delete')!;
    expect(del).toMatchObject({ idempotent: false, confirm: true, retry: { attempts: 1 } });
    expect(reg.get('debug.echo')!.timeoutMs).toBe(5000); // builtin default
    expect(weather.validateArgs({ city: 'Paris' })).toBe(true);
    expect(weather.validateArgs({})).toBe(false);
  });

  it('records ${env:} values from tool files as secrets', async () => {
    const c = ctx('test/fixtures/tools.d/good', { WEATHER_KEY: 'wk-123456' });
    await loadToolsDir(c);
    expect(c.secrets.has('wk-123456')).toBe(true);
  });

  it.each([
    ['unknown-key.yaml', '/colour', 4, "unknown key 'colour'"],
    ['no-side-effect.yaml', '', 1, "missing required property 'sideEffect'"],
    ['templated-host.yaml', '/backends/0/http/url', 6, 'scheme and host are not templated'],
    ['templated-host-header.yaml', '/backends/0/http/headers/HoSt', 8, 'the HoSt header cannot be templated'],
    ['templated-forwarded-host.yaml', '/backends/0/http/headers/X-Forwarded-Host', 8, 'cannot be templated'],
    ['dot-segment-url.yaml', '/backends/0/http/url', 6, "'.' or '..' segment"],
    ['fetch-unguarded.yaml', '/backends/0/builtin', 6, 'builtin fetch needs a URL guard'],
    ['json-string-body.yaml', '/backends/0/http/body', 10, 'must be written as an object or array'],
    ['bad-schema.yaml', '/inputSchema', 4, 'not a valid JSON Schema'],
    ['cached-write.yaml', '/cache/ttlSeconds', 4, 'read-only idempotent'],
    ['cache-fallback-write.yaml', '/fallback/cache', 4, 'read-only idempotent'],
    ['two-kinds.yaml', '/backends/0', 5, 'exactly one of http, mcp or builtin'],
    ['bad-name.json', '/name', 1, 'must match pattern'],
    ['retry-write.yaml', '/retry/attempts', 4, 'never retried'],
  ])('%s is reported at %s (line %i)', (name, path, line, message) => {
    const { tools, problems } = loadBad(name);
    expect(tools).toEqual([]);
    const p = problems.find((x) => x.path === path);
    expect(p, JSON.stringify(problems)).toBeDefined();
    expect(p!.line).toBe(line);
    expect(p!.message).toContain(message);
    expect(p!.file).toBe(join('test/fixtures/tools.d/bad', name));
  });

  it('reports YAML and strict JSON syntax errors', () => {
    expect(loadBad('syntax.yaml').problems[0]!.line).toBeGreaterThan(0);
    expect(loadBad('trailing-comma.json').problems[0]!.message).toContain('invalid JSON');
  });

  it('a bad file never takes down a good one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-tools-'));
    cpSync('test/fixtures/tools.d/good', dir, { recursive: true });
    cpSync('test/fixtures/tools.d/bad', dir, { recursive: true });
    const reg = await loadToolsDir(ctx(dir));
    expect(reg.tools.map((t) => t.name)).toEqual(['debug.echo', 'files.delete', 'weather.current']);
    const badFiles = new Set(reg.problems.map((p) => p.file));
    expect(badFiles.size).toBe(readdirSync('test/fixtures/tools.d/bad').length);
  });

  it('keeps the last good version of a file that broke, and drops a deleted file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-tools-'));
    cpSync('test/fixtures/tools.d/good', dir, { recursive: true });
    const first = await loadToolsDir(ctx(dir));
    writeFileSync(join(dir, 'echo.yml'), 'name: debug.echo\ndescription: broken now\n');
    rmSync(join(dir, 'files-delete.json'));
    const second = await loadToolsDir(ctx(dir), first);
    expect(second.generation).toBe(first.generation + 1);
    expect(second.get('debug.echo')).toBe(first.get('debug.echo'));
    expect(second.get('files.delete')).toBeUndefined();
    expect([...new Set(second.problems.map((p) => p.file))]).toEqual([join(dir, 'echo.yml')]);
  });

  it('refuses a second file defining the same name, keeping the first owner', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-tools-'));
    const tool = (d: string) => `name: dup.tool\ndescription: ${d}\nsideEffect: none\nbackends: [{ id: b, builtin: echo }]\n`;
    writeFileSync(join(dir, 'b.yaml'), tool('first'));
    const first = await loadToolsDir(ctx(dir));
    writeFileSync(join(dir, 'a.yaml'), tool('intruder')); // sorts first, but came later
    const second = await loadToolsDir(ctx(dir), first);
    expect(second.get('dup.tool')!.description).toBe('first');
    expect(second.problems[0]).toMatchObject({ file: join(dir, 'a.yaml'), path: '/name' });
  });

  it('makes provider names that satisfy OpenAI and Anthropic and stay unique', () => {
    expect(providerNameOf('weather.current')).toBe('weather__current');
    const long = `a.${'x'.repeat(80)}`;
    const p = providerNameOf(long);
    expect(p).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(providerNameOf(`a.${'x'.repeat(79)}y`)).not.toBe(p);
  });
});
