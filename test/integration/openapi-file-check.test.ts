import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';

/** `toolgate check` (compiled, as a CI job runs it) on a tools.d with a kind: openapi file. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = 'dist/cli/check.js';

function run(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, env: { PATH: process.env['PATH'] ?? '' }, encoding: 'utf8', timeout: 20000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('toolgate check with an OpenAPI document', () => {
  let dir: string;
  let tools: string;
  let config: string;
  beforeAll(() => {
    if (!existsSync(`${ROOT}${CLI}`)) spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
    dir = mkdtempSync(join(tmpdir(), 'toolgate-oa-check-'));
    tools = join(dir, 'tools.d');
    mkdirSync(join(tools, 'specs'), { recursive: true });
    config = join(dir, 'gateway.yaml');
    writeFileSync(config, stringify({ tools: { dir: tools } }));
    writeFileSync(
      join(tools, 'specs', 'pets.yaml'),
      stringify({
        openapi: '3.0.3',
        info: { title: 'pets', version: '1' },
        paths: {
          '/pets': { get: { operationId: 'listPets', responses: { '200': { description: 'ok' } } }, post: { operationId: 'createPet', responses: { '201': { description: 'ok' } } } },
          '/pets/{id}': {
            delete: { operationId: 'deletePet', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], responses: { '204': { description: 'ok' } } },
          },
          '/search': { get: { operationId: 'search', parameters: [{ name: 'q', in: 'query', style: 'matrix', schema: { type: 'string' } }], responses: { '200': { description: 'ok' } } } },
        },
      }),
    );
    writeFileSync(join(tools, 'pets.yaml'), stringify({ kind: 'openapi', name: 'pets', spec: 'specs/pets.yaml', baseUrl: 'http://127.0.0.1:9' }));
  });

  it('lists the operations it would become (tool, method, path, side effect) and the skipped one with why; exit 0', () => {
    const r = run(['--config', config]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`OpenAPI document pets (3.0, ${join(tools, 'specs', 'pets.yaml')}; 3 operation(s), 1 skipped) from ${join(tools, 'pets.yaml')}:`);
    expect(r.stdout).toMatch(/^ {2}pets\.list_pets +GET +\/pets +read$/m);
    expect(r.stdout).toMatch(/^ {2}pets\.create_pet +POST +\/pets +write$/m);
    expect(r.stdout).toMatch(/^ {2}pets\.delete_pet +DELETE +\/pets\/\{id\} +destructive$/m);
    expect(r.stdout).toMatch(/^ {2}skipped GET \/search: .*matrix.* \[.*specs\/pets\.yaml:\d+: \/paths\/~1search\/get.*\]$/m);
    // The document in specs/ is not a tool file, and the operations are tools like any other.
    expect(r.stdout).toMatch(/OK: 0 error\(s\), \d+ warning\(s\), 3 tool\(s\)/);
  });

  it('--json carries the same, and a broken document is an error with its file and line (exit 1)', () => {
    const json = JSON.parse(run(['--config', config, '--json']).stdout) as { openapi: { name: string; operations: { tool: string; method: string; path: string; sideEffect: string }[]; skipped: { operation: string; reason: string; line?: number }[] }[] };
    expect(json.openapi[0]?.operations).toContainEqual({ tool: 'pets.delete_pet', method: 'DELETE', path: '/pets/{id}', sideEffect: 'destructive' });
    expect(json.openapi[0]?.skipped).toEqual([expect.objectContaining({ operation: 'GET /search', line: expect.any(Number) })]);
    writeFileSync(join(tools, 'broken.yaml'), stringify({ kind: 'openapi', name: 'broken', spec: 'specs/broken.yaml' }));
    writeFileSync(join(tools, 'specs', 'broken.yaml'), 'openapi: 3.0.3\ninfo: {title: b, version: "1"}\npaths:\n  /x: {get: [\n');
    writeFileSync(join(tools, 'literal.yaml'), stringify({ kind: 'openapi', name: 'lit', spec: 'specs/pets.yaml', baseUrl: 'http://127.0.0.1:9', auth: { petauth: 'literal-key-123456' } }));
    const r = run(['--config', config]);
    expect(r.code).toBe(1);
    // An auth value is a secret whatever its scheme is called: written literally, it is flagged.
    expect(r.stdout).toContain(`warning: ${join(tools, 'literal.yaml')}:`);
    expect(r.stdout).toMatch(/literal\.yaml:\d+: \/auth\/petauth: auth 'petauth' holds a literal secret: write it as \$\{env:NAME\} \[inline-secret\]/);
    expect(r.stdout).toMatch(new RegExp(`${join(tools, 'specs', 'broken.yaml').replace(/[.]/g, '\\.')}:\\d+: .*YAML`));
  });
});
