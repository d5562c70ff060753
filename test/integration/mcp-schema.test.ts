import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { ClaudeDesktopFileSchema, McpServerFileSchema } from '../../src/tools/mcp-server-schema.js';
import { readClientConfig } from '../../src/tools/client-config.js';

// Strict ajv: the schemas must also hold up for a validator stricter than the gateway's.
const ajv = new Ajv2020({ allErrors: true, strict: true });
const checkServer = ajv.compile(McpServerFileSchema);
const checkClaude = ajv.compile(ClaudeDesktopFileSchema);

describe('MCP server file schema', () => {
  it('accepts the SPEC example and an HTTP server', () => {
    const spec = {
      kind: 'mcp-server', name: 'files', transport: 'stdio', command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv/shared'], env: {}, prestart: true,
      pool: { maxInFlight: 32, pingIntervalMs: 15000 }, timeoutMs: 30000, include: ['read_*', 'list_*'],
      overrides: { write_file: { sideEffect: 'destructive' } },
    };
    expect(checkServer(spec), JSON.stringify(checkServer.errors)).toBe(true);
    const http = { kind: 'mcp-server', name: 'web', transport: 'streamable-http', url: 'http://127.0.0.1:3001/mcp', headers: { Authorization: 'Bearer x' }, trustChanges: true };
    expect(checkServer(http), JSON.stringify(checkServer.errors)).toBe(true);
  });

  it('rejects unknown keys, fields of the other transport, and bad names', () => {
    const base = { kind: 'mcp-server', name: 'files', transport: 'stdio', command: 'npx' };
    expect(checkServer({ ...base, colour: 'blue' })).toBe(false);
    expect(checkServer({ ...base, url: 'http://127.0.0.1/mcp' })).toBe(false);
    expect(checkServer({ ...base, transport: 'sse' })).toBe(false);
    expect(checkServer({ ...base, name: 'Files.Server' })).toBe(false);
    expect(checkServer({ ...base, pool: { maxInFlight: 0 } })).toBe(false);
  });
});

describe('Claude-Desktop form', () => {
  it('converts command and url entries into server files that validate', () => {
    const file = {
      mcpServers: {
        filesystem: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'], env: { DEBUG: '1' } },
        remote: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer t' } },
        legacy: { url: 'https://mcp.example.com/sse' },
        typed: { type: 'sse', url: 'https://mcp.example.com/events' },
      },
    };
    expect(checkClaude(file), JSON.stringify(checkClaude.errors)).toBe(true);
    const servers = readClientConfig('claude.json', file).servers.map((s) => s.spec);
    expect(servers).toEqual([
      { kind: 'mcp-server', name: 'filesystem', transport: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'], env: { DEBUG: '1' } },
      { kind: 'mcp-server', name: 'remote', transport: 'streamable-http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer t' } },
      { kind: 'mcp-server', name: 'legacy', transport: 'sse', url: 'https://mcp.example.com/sse' },
      { kind: 'mcp-server', name: 'typed', transport: 'sse', url: 'https://mcp.example.com/events' },
    ]);
    for (const server of servers) expect(checkServer(server), JSON.stringify(checkServer.errors)).toBe(true);
  });

  it('accepts client files as written (free names, foreign keys) and refuses wrong types of the keys it reads', () => {
    expect(checkClaude({ mcpServers: { 'My Server': { command: 'x', autoApprove: [], disabled: true } }, globalShortcut: '' })).toBe(true);
    expect(checkClaude({ servers: { Fetch: { type: 'stdio', command: 'uvx' } }, inputs: [] })).toBe(true);
    expect(checkClaude({ mcpServers: { ok: { command: 'x', disabled: 'yes' } } })).toBe(false);
    expect(checkClaude({ mcpServers: { ok: { type: 'websocket', url: 'ws://x' } } })).toBe(false);
  });
});
