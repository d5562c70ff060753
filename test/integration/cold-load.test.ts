import { beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import { loadConfig } from '../../src/config/load.js';

type Loader = typeof import('../../src/tools/loader.js');

/**
 * A big tools.d through the compiled loader (dist/), where YAML parsing is shared with worker
 * threads: the same registry and the same problems, lines included, as one thread would give.
 */
describe('cold load of a big tools.d (compiled, parse workers)', () => {
  let loader: Loader;
  beforeAll(async () => {
    if (!existsSync('dist/tools/parse-worker.js')) execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
    loader = (await import(pathToFileURL(resolve('dist/tools/loader.js')).href)) as Loader;
  }, 120_000);

  it('loads 600 files, and reports a syntax error and a schema error with their lines', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-cold-'));
    for (let i = 0; i < 600; i++) {
      const tool = { name: `cold.t${i}`, description: `tool ${i}`, sideEffect: 'none', inputSchema: { type: 'object', properties: { [`p${i}`]: { type: 'integer' } } }, backends: [{ id: 'b', builtin: 'echo' }] };
      writeFileSync(join(dir, `t${String(i).padStart(3, '0')}.yaml`), stringify(tool));
    }
    writeFileSync(join(dir, 't100.yaml'), 'name: cold.t100\ndescription: [unclosed\n');
    writeFileSync(join(dir, 't500.yaml'), stringify({ name: 'cold.t500', description: 'x', sideEffect: 'often', backends: [{ id: 'b', builtin: 'echo' }] }));
    const defaults = loadConfig({ file: 'config/gateway.yaml', env: {} }).config.defaults;
    const reg = await loader.loadToolsDir({ dir, env: {}, secrets: new Set(), defaults });
    expect(reg.size).toBe(598);
    expect(reg.get('cold.t599')?.validateArgs({ p599: 1 })).toBe(true);
    expect(reg.get('cold.t599')?.validateArgs({ p599: 'x' })).toBe(false);
    const byFile = (f: string) => reg.problems.filter((p) => p.file.endsWith(f));
    expect(byFile('t100.yaml')[0]?.line).toBeGreaterThan(0);
    expect(byFile('t500.yaml')[0]).toMatchObject({ path: '/sideEffect', line: 3 });
    expect(reg.problems).toHaveLength(2);
  });
});
