import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatReport } from '../../src/cli/format.js';
import { runCheck } from '../../src/cli/run.js';
import { loadToolsDir } from '../../src/tools/loader.js';
import { normalizeServerName } from '../../src/tools/client-config.js';
import type { Config } from '../../src/config/schema.js';
import { formatProblem } from '../../src/util/source.js';

// MCP client config files as Claude Desktop, Cursor, VS Code, Windsurf and Cline write them
// (test/fixtures/client-configs: copied from their documentation, sources in its README).

const FIX = 'test/fixtures/client-configs';
const defaults = { timeoutMs: { builtin: 5000, http: 30000, mcp: 30000 } } as Config['defaults'];
const load = (dir: string) => loadToolsDir({ dir, env: {}, secrets: new Set(), defaults });
const check = (dir: string) => runCheck({ toolsDir: dir, env: {} });
const servers = async (dir: string) => (await load(dir)).servers.map((s) => s.spec);

function dirWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'client-config-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('client config files from the clients documentation load', () => {
  it('Claude Desktop: a whole claude_desktop_config.json, globalShortcut ignored with a warning', async () => {
    const r = await load(`${FIX}/claude-desktop`);
    expect(r.problems).toEqual([]);
    expect(r.servers.map((s) => s.spec)).toEqual([
      { kind: 'mcp-server', name: 'filesystem', transport: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/Users/username/Desktop', '/Users/username/Downloads'] },
    ]);
    const c = await check(`${FIX}/claude-desktop`);
    expect(c.ok).toBe(true);
    expect(c.warnings.filter((w) => w.rule === 'client-config').map(formatProblem)).toEqual([
      `${FIX}/claude-desktop/claude_desktop_config.json:2: /globalShortcut: top-level key 'globalShortcut' ignored: only the servers are read`,
    ]);
  });

  it('Cursor: a stdio and a remote server', async () => {
    expect(await servers(`${FIX}/cursor`)).toEqual([
      { kind: 'mcp-server', name: 'server-name', transport: 'stdio', command: 'npx', args: ['-y', 'mcp-server'], env: { API_KEY: 'value' } },
      { kind: 'mcp-server', name: 'remote-server', transport: 'streamable-http', url: 'http://localhost:3000/mcp', headers: { API_KEY: 'value' } },
    ]);
    expect((await check(`${FIX}/cursor`)).clientConfigs.map((n) => [n.from, n.to])).toEqual([['server-name', 'server-name'], ['remote-server', 'remote-server']]);
  });

  it('VS Code: servers with type, inputs ignored with a warning, names normalized and shown by check', async () => {
    expect(await servers(`${FIX}/vscode`)).toEqual([
      expect.objectContaining({ name: 'perplexity', transport: 'stdio', command: 'npx' }),
      expect.objectContaining({ name: 'fetch', transport: 'stdio', command: 'uvx' }),
      { kind: 'mcp-server', name: 'github', transport: 'streamable-http', url: 'https://api.githubcopilot.com/mcp/' },
    ]);
    const c = await check(`${FIX}/vscode`);
    expect(c.errors).toEqual([]);
    expect(c.warnings.filter((w) => w.rule === 'client-config').map((w) => w.message)).toEqual([
      "top-level key 'inputs' ignored: only the servers are read ('inputs' are VS Code prompts: write the values as ${env:NAME} instead)",
    ]);
    expect(c.clientConfigs.map((n) => [n.from, n.to])).toEqual([['Perplexity', 'perplexity'], ['Fetch', 'fetch'], ['github', 'github']]);
    expect(formatReport(c)).toMatch(/^ {2}Perplexity +→ +perplexity +test\/fixtures\/client-configs\/vscode\/mcp\.json$/m);
  });

  it('Windsurf: serverUrl is the url (an /sse path: the legacy transport)', async () => {
    expect(await servers(`${FIX}/windsurf`)).toEqual([
      expect.objectContaining({ name: 'github', transport: 'stdio' }),
      { kind: 'mcp-server', name: 'figma', transport: 'sse', url: 'https://your-server-url/sse' },
    ]);
  });

  it('Cline: alwaysAllow ignored with a warning naming it, disabled: false kept', async () => {
    expect((await servers(`${FIX}/cline`)).map((s) => s.name)).toEqual(['local-server', 'remote-server']);
    const c = await check(`${FIX}/cline`);
    expect(c.errors).toEqual([]);
    expect(c.warnings.filter((w) => w.rule === 'client-config').map((w) => `${w.line}: ${w.message}`)).toEqual([
      "9: MCP server 'local-server': key 'alwaysAllow' ignored (toolgate has no such setting for a stdio server)",
      "17: MCP server 'remote-server': key 'alwaysAllow' ignored (toolgate has no such setting for a streamable-http server)",
    ]);
  });
});

describe('client config files: what is mapped', () => {
  it('disabled: true skips the server, and check says so', async () => {
    const dir = dirWith({ 'mcp.json': JSON.stringify({ mcpServers: { on: { command: 'node' }, off: { command: 'node', disabled: true } } }) });
    expect((await servers(dir)).map((s) => s.name)).toEqual(['on']);
    const c = await check(dir);
    expect(c.clientConfigs.map((n) => [n.from, n.skipped ?? n.to])).toEqual([['on', 'on'], ['off', 'disabled: true']]);
    expect(formatReport(c)).toMatch(/off +→ +\(skipped: disabled: true\)/);
  });

  it('timeout: milliseconds, but seconds in a Cline file (with a warning saying so); type maps to the transport', async () => {
    const entry = { url: 'https://mcp.example.com/x', type: 'streamableHttp', timeout: 60, autoApprove: [], trust: true, disabledTools: ['x'] };
    const ms = dirWith({ 'claude.json': JSON.stringify({ mcpServers: { a: entry } }) });
    expect(await servers(ms)).toEqual([{ kind: 'mcp-server', name: 'a', transport: 'streamable-http', url: 'https://mcp.example.com/x', timeoutMs: 60 }]);
    const s = dirWith({ 'cline_mcp_settings.json': JSON.stringify({ mcpServers: { a: { ...entry, type: 'sse' } } }) });
    expect(await servers(s)).toEqual([{ kind: 'mcp-server', name: 'a', transport: 'sse', url: 'https://mcp.example.com/x', timeoutMs: 60000 }]);
    const warned = (await check(s)).warnings.filter((w) => w.rule === 'client-config').map((w) => w.message);
    expect(warned).toContain("MCP server 'a': keys 'autoApprove', 'trust', 'disabledTools' ignored (toolgate has no such setting for a sse server)");
    expect(warned).toContain("MCP server 'a': timeout 60 read as seconds (Cline's unit, from the file name): timeoutMs 60000");
  });

  it('normalizes names to one [a-z0-9_-] segment', () => {
    expect(normalizeServerName('Memory')).toBe('memory');
    expect(normalizeServerName('brave.search')).toBe('brave-search');
    expect(normalizeServerName('My Server (v2)')).toBe('my-server-v2');
    expect(normalizeServerName('...')).toBe('');
    expect(normalizeServerName('x'.repeat(100))).toHaveLength(64);
  });
});

describe('client config files: hostile input is a clear problem naming the file and the server', () => {
  const problems = async (value: unknown, name = 'mcp.json') => (await load(dirWith({ [name]: JSON.stringify(value) }))).problems.map((p) => `${p.path}: ${p.message}`);

  it('a name with nothing left after normalizing', async () => {
    expect(await problems({ mcpServers: { '...': { command: 'node' } } })).toEqual([
      '/mcpServers/...: MCP server name "..." has no letter or digit: it cannot name the tools (<server>.<tool>); rename it',
    ]);
  });
  it('two names that normalize alike', async () => {
    expect(await problems({ mcpServers: { 'Brave.Search': { command: 'a' }, 'brave-search': { command: 'b' } } })).toEqual([
      '/mcpServers/brave-search: MCP servers "Brave.Search" and "brave-search" both become \'brave-search\': rename one',
    ]);
  });
  it('non-object blocks and entries, wrong types, an unknown type', async () => {
    expect(await problems({ mcpServers: [] })).toEqual(['/mcpServers: mcpServers must be an object of servers by name (found an array)']);
    expect(await problems({ servers: 'x' })).toEqual(['/servers: servers must be an object of servers by name (found string)']);
    expect(await problems({ mcpServers: { a: null, b: 7 } })).toEqual([
      "/mcpServers/a: MCP server 'a' must be an object ({ command, args } or { url })",
      "/mcpServers/b: MCP server 'b' must be an object ({ command, args } or { url })",
    ]);
    expect(await problems({ mcpServers: { a: { command: 'x', args: 'y', env: { K: 1 } } } })).toEqual([
      "/mcpServers/a/args: MCP server 'a': args must be an array of strings",
      "/mcpServers/a/env: MCP server 'a': env must be an object of strings",
    ]);
    expect(await problems({ mcpServers: { a: { type: 'websocket', url: 'ws://x' } } })).toEqual([
      "/mcpServers/a/type: MCP server 'a': type \"websocket\" is not one of stdio, http, streamable-http, streamableHttp, sse",
    ]);
    expect(await problems({ mcpServers: { a: { args: ['x'] } } })).toEqual(["/mcpServers/a/command: MCP server 'a': neither command (a local server) nor url (a remote one)"]);
    expect(await problems({ mcpServers: { a: { url: 'file:///etc/passwd' } } })).toEqual(["/mcpServers/a/url: MCP server 'a': url must start with http:// or https://"]);
    expect(await problems({ mcpServers: { a: { command: 'x', timeout: -1 } } })).toEqual(["/mcpServers/a/timeout: MCP server 'a': timeout must be a positive number"]);
  });
  it('a huge file: too many servers is one problem, not a thousand spawns', async () => {
    const many = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`s${i}`, { command: 'node' }]));
    expect(await problems({ mcpServers: many })).toEqual(['/mcpServers: 5000 servers in one file; at most 1000']);
  });
});

describe('kind: mcp-client-config: settings for a client file left as the client wrote it', () => {
  const setup = (settings: unknown) => {
    const dir = mkdtempSync(join(tmpdir(), 'client-ref-'));
    const sub = join(dir, 'clients');
    mkdirSync(sub);
    writeFileSync(join(sub, 'claude_desktop_config.json'), JSON.stringify({ globalShortcut: '', mcpServers: { Memory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] } } }));
    writeFileSync(join(dir, 'desktop.yaml'), stringify({ kind: 'mcp-client-config', file: 'clients/claude_desktop_config.json', ...(settings as object) }));
    return dir;
  };
  it('adds include, overrides and timeoutMs by the name as written, and check shows the mapping', async () => {
    const dir = setup({ servers: { Memory: { include: ['read_*'], overrides: { read_graph: { sideEffect: 'read' } }, timeoutMs: 7000 } } });
    const r = await load(dir);
    expect(r.problems).toEqual([]);
    expect(r.servers.map((s) => s.spec)).toEqual([
      { kind: 'mcp-server', name: 'memory', transport: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'], include: ['read_*'], overrides: { read_graph: { sideEffect: 'read' } }, timeoutMs: 7000 },
    ]);
    const c = await check(dir);
    expect(c.clientConfigs.map((n) => [n.from, n.to])).toEqual([['Memory', 'memory']]);
    expect(c.warnings.filter((w) => w.rule === 'client-config').map((w) => w.path)).toEqual(['/globalShortcut']);
  });
  it('a setting for a server the file does not have, a missing file, a foreign key: problems naming the file', async () => {
    const unknown = await load(setup({ servers: { memroy: { include: ['x'] } } }));
    expect(unknown.problems.map((p) => p.message)).toEqual(["no server 'memroy' in clients/claude_desktop_config.json (its servers: Memory)"]);
    const missing = await load(setup({ file: 'clients/nope.json' }));
    expect(missing.problems[0]?.message).toMatch(/^cannot read clients\/nope\.json: ENOENT/);
    const foreign = await load(setup({ servers: { Memory: { command: 'rm' } } }));
    expect(foreign.problems.map((p) => `${p.path}: ${p.message}`)).toEqual(["/servers/Memory/command: unknown key 'command'"]);
  });
});
