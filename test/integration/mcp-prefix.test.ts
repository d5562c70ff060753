import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGateway, echoTool, type TestGateway } from '../helpers/app.js';
import { EVERYTHING } from '../helpers/processes.js';

/** `prefix` in an MCP server file (SPEC §6) and in a `kind: mcp-client-config` file's server settings. */
const node = process.execPath;
const server = (name: string, extra: Record<string, unknown>) => ({
  kind: 'mcp-server', name, transport: 'stdio', command: node, args: [EVERYTHING, 'stdio'], prestart: true, include: ['echo', 'get-sum'], timeoutMs: 10000, ...extra,
});

describe('prefix: what the imported tool names start with', () => {
  let gw: TestGateway;
  const names = async () => (await gw.app.inject({ method: 'GET', url: '/v1/tools' })).json<{ tools: { name: string }[] }>().tools.map((t) => t.name).sort();
  const reload = async () => {
    const r = await gw.app.inject({ method: 'POST', url: '/admin/reload' });
    await gw.app.gw.mcp.settled();
    return r.json<{ errors: { file: string; message: string }[] }>();
  };

  beforeAll(async () => {
    gw = await startGateway({ tools: { 'plain.yaml': server('plain', { prefix: '' }), 'deep.yaml': server('deep', { prefix: 'demo.tools' }) } });
    await gw.app.gw.mcp.settled();
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('"" imports the tools as the server names them, a dotted prefix nests them, and both are called', async () => {
    expect(await names()).toEqual(['demo.tools.echo', 'demo.tools.get-sum', 'echo', 'get-sum']);
    const plain = await gw.call('get-sum', { a: 2, b: 3 });
    expect(plain.statusCode).toBe(200);
    expect(JSON.stringify(plain.json())).toContain('5');
    const deep = await gw.call('demo.tools.echo', { message: 'nested prefix' });
    expect(deep.statusCode).toBe(200);
    expect(JSON.stringify(deep.json())).toContain('nested prefix');
    const audit = await gw.audit();
    expect(audit.some((r) => r.tool === 'get-sum' && r.outcome === 'ok')).toBe(true);
  });

  it('names must stay unique: a tool file that already has the name keeps it, and the import is reported against the server file', async () => {
    gw.writeTool('echo.yaml', echoTool('echo'));
    const r = await reload();
    const problem = r.errors.find((e) => e.file.endsWith('plain.yaml'));
    expect(problem?.message).toMatch(/echo/);
    const call = await gw.call('echo', { message: 'which one' });
    expect(call.statusCode).toBe(200);
    expect(JSON.stringify(call.json())).not.toContain('Echo:');
    expect(await names()).toContain('get-sum');
  });

  it('a prefix that is not a tool-name prefix is a load problem naming the key, and the good files stay', async () => {
    for (const bad of ['Demo', 'demo.', '.demo', 'de mo', 'x'.repeat(65)]) {
      gw.writeTool('bad.yaml', server('bad', { prefix: bad }));
      const r = await reload();
      expect(r.errors.find((e) => e.file.endsWith('bad.yaml'))?.message, bad).toMatch(/prefix|pattern|64/);
      expect(await names()).toContain('demo.tools.echo');
    }
  });
});

describe('prefix through kind: mcp-client-config', () => {
  let gw: TestGateway | undefined;
  afterAll(async () => {
    await gw?.close();
  });
  it('gives a pasted client file a prefix without editing it', async () => {
    gw = await startGateway({ tools: {} });
    const sub = join(gw.toolsDir, 'clients');
    mkdirSync(sub);
    writeFileSync(join(sub, 'claude_desktop_config.json'), JSON.stringify({ globalShortcut: '', mcpServers: { Everything: { command: node, args: [EVERYTHING, 'stdio'] } } }));
    writeFileSync(join(gw.toolsDir, 'desktop.yaml'), stringify({ kind: 'mcp-client-config', file: 'clients/claude_desktop_config.json', servers: { Everything: { prefix: 'ev', include: ['echo'], prestart: true } } }));
    await gw.app.inject({ method: 'POST', url: '/admin/reload' });
    await gw.app.gw.mcp.settled();
    const tools = (await gw.app.inject({ method: 'GET', url: '/v1/tools' })).json<{ tools: { name: string }[] }>().tools.map((t) => t.name);
    expect(tools).toEqual(['ev.echo']);
    const call = await gw.call('ev.echo', { message: 'from a pasted file' });
    expect(JSON.stringify(call.json())).toContain('from a pasted file');
  });
});
