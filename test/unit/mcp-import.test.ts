import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Tool } from '@modelcontextprotocol/client';
import { stringify } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { annotationDefaults, importServerTools, localToolName } from '../../src/mcp/import.js';
import { PinBook, toolHash } from '../../src/mcp/pins.js';
import { capResult } from '../../src/pipeline/normalize.js';
import type { McpServerEntry } from '../../src/tools/mcp-file.js';
import { loadToolsDir, loadToolText, type LoadContext } from '../../src/tools/loader.js';
import { createAjv } from '../../src/util/ajv.js';
import { toolFileJsonSchema } from '../../src/openapi.js';

const defaults = loadConfig({ file: 'config/gateway.yaml', env: {} }).config.defaults;
const ctx = (dir = '.', env: Record<string, string> = {}): LoadContext => ({ dir, env, secrets: new Set(), defaults });
const tool = (name: string, annotations?: Tool['annotations'], extra: Partial<Tool> = {}): Tool => ({
  name, description: `${name} tool`, inputSchema: { type: 'object', properties: { x: { type: 'string' } } }, ...(annotations ? { annotations } : {}), ...extra,
});

describe('MCP annotations as defaults', () => {
  it.each([
    ['no annotations: the MCP defaults (destructive)', undefined, 'destructive', false],
    ['readOnlyHint wins over everything', { readOnlyHint: true, destructiveHint: true, idempotentHint: false }, 'read', true],
    ['destructiveHint', { readOnlyHint: false, destructiveHint: true, idempotentHint: true }, 'destructive', true],
    ['not destructive, open world missing: external', { destructiveHint: false }, 'external', false],
    ['not destructive, closed world: write', { destructiveHint: false, openWorldHint: false, idempotentHint: true }, 'write', true],
  ] as const)('%s', (_what, annotations, sideEffect, idempotent) => {
    expect(annotationDefaults(tool('t', annotations))).toMatchObject({ sideEffect, idempotent });
  });
});

describe('imported tool names', () => {
  it('keeps [a-z0-9_-] names and makes others into such a segment', () => {
    expect(localToolName('read_file')).toBe('read_file');
    expect(localToolName('get-sum')).toBe('get-sum');
    expect(localToolName('getWeatherNow')).toBe('get_weather_now');
    expect(localToolName('files.read/all')).toBe('files_read_all');
    expect(localToolName('日本')).toBe('tool');
    const long = localToolName('x'.repeat(100));
    expect(long).toHaveLength(64);
    expect(long).not.toBe(localToolName(`${'x'.repeat(99)}y`));
  });
});

describe('importServerTools', () => {
  const entry = (spec: Record<string, unknown>): McpServerEntry => ({
    spec: { kind: 'mcp-server', name: 'srv', transport: 'stdio', command: 'node', ...spec } as McpServerEntry['spec'],
    file: '/tools.d/srv.yaml', pointer: '', hash: 'h', lineOf: () => undefined,
  });
  const listedOf = (tools: Tool[]) => {
    const pins = new PinBook();
    pins.observe(tools, false);
    return pins.listed(tools);
  };
  const ictx = { defaults, ajv: createAjv() };

  it('filters by include/exclude, names <server>.<tool>, and lets overrides win', () => {
    const tools = [tool('read_a', { readOnlyHint: true }), tool('read_b', { readOnlyHint: true }), tool('drop', undefined), tool('camelCase', undefined)];
    const { tools: out, problems } = importServerTools(
      entry({ include: ['read_*', 'drop', 'camelCase'], exclude: ['read_b'], timeoutMs: 1234, overrides: { drop: { sideEffect: 'read', description: 'Overridden.' }, camel_case: { confirm: false } } }),
      listedOf(tools),
      ictx,
    );
    expect(problems).toEqual([]);
    expect(out.map((t) => t.name)).toEqual(['srv.read_a', 'srv.drop', 'srv.camel_case']);
    const [readA, drop, camel] = out;
    expect(readA).toMatchObject({ sideEffect: 'read', idempotent: true, confirm: false, timeoutMs: 1234, providerName: 'srv__read_a' });
    expect(readA?.backends[0]?.target).toEqual({ kind: 'mcp', server: 'srv', tool: 'read_a' });
    // sideEffect overridden on an unannotated tool: that side effect's defaults apply.
    expect(drop).toMatchObject({ sideEffect: 'read', idempotent: true, confirm: false, description: 'Overridden.' });
    expect(camel).toMatchObject({ sideEffect: 'destructive', confirm: false, mcp: { server: 'srv', tool: 'camelCase' } });
  });

  it('validates arguments with the server schema, its draft-07 $schema set aside (ajv 2020 has no draft-07 meta-schema)', () => {
    const def = tool('t', { readOnlyHint: true }, { inputSchema: { type: 'object', $schema: 'http://json-schema.org/draft-07/schema#', properties: { n: { type: 'number' } }, required: ['n'] } });
    const [t] = importServerTools(entry({}), listedOf([def]), ictx).tools;
    expect(t?.validateArgs({ n: 1 })).toBe(true);
    expect(t?.validateArgs({ n: 'one' })).toBe(false);
    expect(t?.inputSchema).not.toHaveProperty('$schema');
  });

  it('keeps a schema that declares draft 2020-12 as the server wrote it, $schema and $defs included, and validates with it', () => {
    const inputSchema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object' as const,
      $defs: { address: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } },
      properties: { home: { $ref: '#/$defs/address' } },
      required: ['home'],
      additionalProperties: false,
    };
    const outputSchema = { $schema: 'https://json-schema.org/draft/2020-12/schema#', type: 'object' as const, properties: { ok: { type: 'boolean' } } };
    const [t] = importServerTools(entry({}), listedOf([tool('t', { readOnlyHint: true }, { inputSchema, outputSchema })]), ictx).tools;
    expect(t?.inputSchema).toEqual(inputSchema);
    expect(t?.outputSchema).toEqual(outputSchema);
    expect(t?.validateArgs({ home: { city: 'Oslo' } })).toBe(true);
    expect(t?.validateArgs({ home: { town: 'Oslo' } })).toBe(false);
    expect(t?.validateArgs({ home: { city: 'Oslo' }, extra: 1 })).toBe(false);
    expect(t?.validateOutput?.({ ok: 'yes' })).toBe(false);
  });

  it('sets aside a $schema of another dialect (draft-07, 2019-09, unknown): validated and listed as 2020-12', () => {
    for (const dialect of ['http://json-schema.org/draft-07/schema#', 'https://json-schema.org/draft/2019-09/schema', 'http://example.com/my-dialect']) {
      const inputSchema = { $schema: dialect, type: 'object' as const, definitions: { n: { type: 'number' } }, properties: { n: { $ref: '#/definitions/n' } }, required: ['n'] };
      const out = importServerTools(entry({}), listedOf([tool('t', { readOnlyHint: true }, { inputSchema })]), ictx);
      expect(out.problems, dialect).toEqual([]);
      const { $schema: _d, ...rest } = inputSchema;
      expect(out.tools[0]?.inputSchema, dialect).toEqual(rest);
      expect(out.tools[0]?.validateArgs({ n: 'one' }), dialect).toBe(false);
    }
  });

  it('keeps the pin of a definition whatever its dialect: the pin is of what the server listed', () => {
    const def = tool('t', { readOnlyHint: true }, { inputSchema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' } });
    const [t] = importServerTools(entry({}), listedOf([def]), ictx).tools;
    expect(t?.mcp?.hash).toBe(toolHash(def)); // as before this change: $schema was always in the pin
    expect(toolHash(def)).not.toBe(toolHash({ ...def, inputSchema: { type: 'object' } }));
  });

  it('reports a tool that does not compile against the server file and imports the rest', () => {
    const out = importServerTools(
      entry({ overrides: { bad: { retry: { attempts: 3 } } } }),
      listedOf([tool('bad', { destructiveHint: true }), tool('good', { readOnlyHint: true })]),
      ictx,
    );
    expect(out.tools.map((t) => t.name)).toEqual(['srv.good']);
    expect(out.problems).toEqual([{ file: '/tools.d/srv.yaml', path: '/overrides/bad/retry/attempts', message: expect.stringContaining("imported tool 'bad'") }]);
  });
});

describe('PinBook', () => {
  it('trusts the first definition, holds a changed one, and accepts it on request', () => {
    const pins = new PinBook();
    const v1 = tool('t', { readOnlyHint: true });
    const v2 = { ...v1, description: 'now different' };
    expect(pins.observe([v1], false)).toEqual([]);
    const [change] = pins.observe([v2], false);
    expect(change).toMatchObject({ tool: 't', status: 'held' });
    expect(change?.oldHash).not.toBe(change?.newHash);
    expect(pins.listed([v2])).toEqual([{ def: v1, hash: change?.oldHash, held: { newHash: change?.newHash, reason: 'changed', oldHash: change?.oldHash, findings: [], definition: v2 } }]);
    expect(pins.observe([v2], false)).toEqual([]); // already held: no second record
    expect(pins.accept('t')).toMatchObject({ status: 'accepted', newHash: change?.newHash });
    expect(pins.listed([v2])).toEqual([{ def: v2, hash: change?.newHash }]);
    expect(pins.accept('t')).toBeUndefined();
  });

  it('holds a flipped annotation too, and remembers a tool that left the list', () => {
    const pins = new PinBook();
    pins.observe([tool('t', { destructiveHint: true })], false);
    pins.observe([], false);
    expect(pins.observe([tool('t', { readOnlyHint: true })], false)).toMatchObject([{ status: 'held' }]);
  });

  it('accepts at once for a trusted server', () => {
    const pins = new PinBook();
    pins.observe([tool('t')], true);
    expect(pins.observe([{ ...tool('t'), description: 'x' }], true)).toMatchObject([{ status: 'accepted' }]);
    expect(pins.listed([tool('t')])[0]?.held).toBeUndefined();
  });
});

describe('MCP server files in tools.d', () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-files-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reports unknown keys, bad overrides and clashing server names with file, line and path', async () => {
    const server = { kind: 'mcp-server', name: 'files', transport: 'stdio', command: 'node' };
    writeFileSync(join(dir, 'a.yaml'), stringify({ ...server, colour: 'blue' }));
    writeFileSync(join(dir, 'b.yaml'), stringify({ ...server, overrides: { write_file: { sideEffect: 'maybe', name: 'x' } } }));
    writeFileSync(join(dir, 'c.yaml'), stringify(server));
    writeFileSync(join(dir, 'd.json'), JSON.stringify({ mcpServers: { files: { command: 'node' }, other: { url: 'http://127.0.0.1:1/mcp' } } }));
    const reg = await loadToolsDir(ctx(dir));
    expect(reg.problems).toEqual(expect.arrayContaining([
      { file: join(dir, 'a.yaml'), line: 5, path: '/colour', message: "unknown key 'colour'" },
      expect.objectContaining({ file: join(dir, 'b.yaml'), path: '/overrides/write_file/name', message: "unknown key 'name'" }),
      expect.objectContaining({ file: join(dir, 'b.yaml'), path: '/overrides/write_file/sideEffect', line: 7 }),
      expect.objectContaining({ file: join(dir, 'd.json'), path: '/mcpServers/files', message: expect.stringContaining('clashes with the one declared in') }),
    ]));
    expect(reg.servers.map((s) => [s.spec.name, s.spec.transport, s.file])).toEqual([
      ['files', 'stdio', join(dir, 'c.yaml')],
      ['other', 'streamable-http', join(dir, 'd.json')],
    ]);
  });

  it('expands ${env:NAME} in server files and records the values as secrets', () => {
    const c = ctx(dir, { GH_TOKEN: 'ghp-secret-123' });
    const text = stringify({ kind: 'mcp-server', name: 'gh', transport: 'stdio', command: 'node', env: { TOKEN: '${env:GH_TOKEN}' } });
    expect(loadToolText(join(dir, 'gh.yaml'), text, c)).toMatchObject({ tools: [], problems: [], servers: [{ spec: { env: { TOKEN: 'ghp-secret-123' } } }] });
    expect(c.secrets.has('ghp-secret-123')).toBe(true);
  });

  it('are covered by the published tools.d schema', () => {
    const validate = createAjv().compile(JSON.parse(JSON.stringify(toolFileJsonSchema())) as object);
    const server = { kind: 'mcp-server', name: 'files', transport: 'stdio', command: 'npx', overrides: { write_file: { sideEffect: 'destructive' } } };
    expect(validate(server)).toBe(true);
    expect(validate({ ...server, overrides: { write_file: { inputSchema: {} } } })).toBe(false);
    expect(validate({ mcpServers: { fs: { command: 'npx', args: ['-y', 'x'] }, web: { url: 'https://mcp.example.com/mcp' } } })).toBe(true);
    expect(validate({ mcpServers: { fs: { command: 'npx', autoApprove: [] } }, globalShortcut: '' })).toBe(true);
    expect(validate({ servers: { Fetch: { type: 'stdio', command: 'uvx' } }, inputs: [] })).toBe(true);
    expect(validate({ mcpServers: { fs: { command: 'npx', disabled: 'no' } } })).toBe(false);
    expect(validate({ name: 'a.b', description: 'd', sideEffect: 'read', backends: [{ id: 'x', builtin: 'echo' }] })).toBe(true);
  });

  it('names an unknown kind', () => {
    const out = loadToolText(join(dir, 'k.yaml'), 'kind: plugin\nname: x\n', ctx(dir));
    expect(out.problems).toEqual([{ file: join(dir, 'k.yaml'), line: 1, path: '/kind', message: expect.stringContaining('unknown kind "plugin"') }]);
  });
});

describe('capResult on MCP content', () => {
  const image = { type: 'image', data: 'A'.repeat(400), mimeType: 'image/png' };
  it('keeps blocks that fit and drops whole ones that do not, with a marker', () => {
    const out = capResult({ content: [{ type: 'text', text: 'caption' }, image, { type: 'resource', resource: { uri: 'x://y', text: 'B'.repeat(400) } }], isError: false }, 100);
    expect(out.content).toEqual([
      { type: 'text', text: 'caption' },
      { type: 'text', text: expect.stringMatching(/^\[truncated: 2 image, resource block\(s\) of \d+ bytes dropped, over the 100-byte result limit\]$/) },
    ]);
    expect(capResult({ content: [image], isError: false }, 1000).content).toEqual([image]);
  });

  it('drops a structuredContent larger than the limit with a marker', () => {
    const out = capResult({ content: [{ type: 'text', text: 'ok' }], structuredContent: { big: 'C'.repeat(200) }, isError: false }, 100);
    expect(out.structuredContent).toBeUndefined();
    expect(out.content.at(-1)).toEqual({ type: 'text', text: '[truncated: structuredContent dropped, over the 100-byte result limit]' });
  });
});
