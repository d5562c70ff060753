import { describe, expect, it, vi } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { createAjv } from '../../src/util/ajv.js';
import { compileValidator } from '../../src/tools/lazy-validator.js';
import { loadToolsDir, type LoadContext } from '../../src/tools/loader.js';
import { loadConfig } from '../../src/config/load.js';

const defaults = loadConfig({ file: 'config/gateway.yaml', env: {} }).config.defaults;
const tool = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: name,
  sideEffect: 'none',
  inputSchema: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
  backends: [{ id: 'b', builtin: 'echo' }],
  ...extra,
});

describe('tool schemas: checked at load, compiled on first use', () => {
  const ajv = createAjv();

  it('validates like a compiled validator, errors included', () => {
    const v = compileValidator(ajv, { type: 'object', required: ['n'], properties: { n: { type: 'integer', maximum: 3 } } });
    expect(v({ n: 2 })).toBe(true);
    expect(v.errors).toBeNull();
    expect(v({ n: 9 })).toBe(false);
    expect(v.errors?.[0]).toMatchObject({ instancePath: '/n', keyword: 'maximum' });
    expect(v({})).toBe(false);
    expect(v.errors?.[0]).toMatchObject({ keyword: 'required' });
  });

  it('still finds a bad type, a bad regex and an unresolvable $ref at load', () => {
    expect(() => compileValidator(ajv, { type: 'object', properties: { a: { type: 'nonsense' } } })).toThrow(/schema is invalid/);
    expect(() => compileValidator(ajv, { type: 'object', properties: { a: { type: 'string', pattern: '([a-' } } })).toThrow(/Invalid regular expression/);
    expect(() => compileValidator(ajv, { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } })).toThrow(/resolve reference/);
  });

  it('a property named $ref or $id is a name, not a reference: compiled on first use; a real $ref under it still at load', () => {
    const compile = vi.spyOn(ajv, 'compile');
    const named = { type: 'object', properties: { $ref: { type: 'string' }, $id: { type: 'object', properties: { $ref: { type: 'integer' } } } } };
    const v = compileValidator(ajv, named);
    expect(compile).not.toHaveBeenCalled();
    expect(v({ $ref: 'x', $id: { $ref: 1 } })).toBe(true);
    expect(v({ $ref: 1 })).toBe(false);
    expect(compile).toHaveBeenCalledTimes(1);
    compile.mockRestore();
    expect(() => compileValidator(ajv, { type: 'object', properties: { $ref: { $ref: '#/$defs/missing' } } })).toThrow(/resolve reference/);
    expect(() => compileValidator(ajv, { $defs: { $ref: { $ref: '#/$defs/nope' } }, $ref: '#/$defs/$ref' })).toThrow(/resolve reference/);
    expect(() => compileValidator(ajv, { type: 'object', patternProperties: { '([a-': { type: 'string' } } })).toThrow(/Invalid regular expression/);
  });

  it('checks shared subschemas once, yet every schema holding an invalid one, or another mistake, is refused', () => {
    const good = { type: 'string', items: { type: 'integer' } };
    const bad = { type: 'object', properties: { deep: { type: 'nonsense' } } };
    const shared = new WeakSet<object>([good, good.items, bad, bad.properties.deep]);
    expect(() => compileValidator(ajv, { type: 'object', properties: { a: good, b: good } }, shared)).not.toThrow();
    expect(() => compileValidator(ajv, { type: 'object', properties: { a: good, b: { minimum: 'x' } } }, shared)).toThrow(/schema is invalid/);
    expect(() => compileValidator(ajv, { type: 'object', properties: { a: bad } }, shared)).toThrow(/schema is invalid/);
    expect(() => compileValidator(ajv, { type: 'object', properties: { c: { anyOf: [good, bad] } } }, shared)).toThrow(/schema is invalid/);
    expect(() => compileValidator(ajv, { type: 'object', properties: { d: bad.properties.deep } }, shared)).toThrow(/schema is invalid/);
  });
});

describe('loadToolsDir on reload', () => {
  it('keeps the compiled tools of unchanged files, and recompiles the changed one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-reuse-'));
    writeFileSync(join(dir, 'a.yaml'), stringify(tool('r.a')));
    writeFileSync(join(dir, 'b.yaml'), stringify(tool('r.b')));
    const ctx: LoadContext = { dir, env: {}, secrets: new Set(), defaults };
    const first = await loadToolsDir(ctx);
    writeFileSync(join(dir, 'b.yaml'), stringify(tool('r.b', { description: 'changed' })));
    const second = await loadToolsDir(ctx, first);
    expect(second.get('r.a')).toBe(first.get('r.a'));
    expect(second.get('r.b')).not.toBe(first.get('r.b'));
    expect(second.get('r.b')?.description).toBe('changed');
  });
});
