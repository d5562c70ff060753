import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { catchError, inMs, nextEvent } from '../helpers/mcp-events.js';
import { groupMembers, EVERYTHING } from '../helpers/processes.js';
import { McpPool } from '../../src/mcp/pool.js';
import type { McpStdioServer } from '../../src/tools/mcp-server-schema.js';

// Servers written for these tests run as real child processes (`node -e`), so the pool's
// supervision is exercised exactly as with servers from npm: pagination, list_changed,
// isError, crashes with stderr, wrappers that start grandchildren.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** 7 tools served 3 per page; t1 changes t0's description and notifies; t2 fails; t3 crashes. */
const PAGED_SERVER = `
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
let version = 1;
const tools = () => Array.from({ length: 7 }, (_, i) => ({
  name: 't' + i, description: i === 0 ? 'first tool v' + version : 'tool ' + i, inputSchema: { type: 'object' },
}));
const server = new Server({ name: 'paged', version: '1' }, { capabilities: { tools: { listChanged: true } } });
server.setRequestHandler(ListToolsRequestSchema, (req) => {
  const start = Number(req.params?.cursor ?? 0);
  return { tools: tools().slice(start, start + 3), ...(start + 3 < 7 ? { nextCursor: String(start + 3) } : {}) };
});
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const name = req.params.name;
  if (name === 't1') { version++; await server.sendToolListChanged(); return { content: [{ type: 'text', text: 'changed' }] }; }
  if (name === 't2') return { isError: true, content: [{ type: 'text', text: 'quota exceeded for key k-123' }] };
  if (name === 't3') { console.error('fatal: out of cheese'); setTimeout(() => process.exit(7), 10); return new Promise(() => {}); }
  return { content: [{ type: 'text', text: 'ok ' + name }] };
});
await server.connect(new StdioServerTransport());
`;

/** Like npx: the real server runs as a grandchild; a helper that ignores SIGTERM runs beside it. */
const WRAPPER = `
const { spawn } = require('node:child_process');
spawn(process.execPath, ['-e', 'process.on("SIGTERM", () => {}); setInterval(() => {}, 1e6)'], { stdio: 'ignore' });
const server = spawn(process.execPath, [${JSON.stringify(EVERYTHING)}, 'stdio'], { stdio: 'inherit' });
server.on('exit', (code) => process.exit(code ?? 1));
`;

function nodeServer(name: string, args: string[], extra: Partial<McpStdioServer> = {}): McpStdioServer {
  return { kind: 'mcp-server', name, transport: 'stdio', command: process.execPath, args, cwd: ROOT, ...extra };
}




let pool: McpPool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

describe('tool lists', () => {
  it('follows nextCursor to the end and reports list_changed', async () => {
    pool = new McpPool([nodeServer('paged', ['--input-type=module', '-e', PAGED_SERVER])]);
    const tools = await pool.listTools('paged');
    expect(tools.map((t) => t.name)).toEqual(['t0', 't1', 't2', 't3', 't4', 't5', 't6']);
    expect(tools[0]?.description).toBe('first tool v1');

    let changes = 0;
    const changed = nextEvent(pool, 'toolsChanged', (e) => e.server === 'paged');
    const unsubscribe = pool.onToolsChanged('paged', () => changes++);
    await pool.callTool('paged', 't1', {}, { deadline: inMs(5000) });
    await changed;
    unsubscribe();
    expect(changes).toBe(1);
    expect((await pool.listTools('paged'))[0]?.description).toBe('first tool v2');
  });
});

describe('results and failures', () => {
  it('throws tool_error with the tool text for isError results', async () => {
    pool = new McpPool([nodeServer('paged', ['--input-type=module', '-e', PAGED_SERVER])]);
    const err = await catchError(pool.callTool('paged', 't2', {}, { deadline: inMs(5000) }));
    expect(err.kind).toBe('tool_error');
    expect(err.message).toBe('quota exceeded for key k-123');
    expect(err.details.result?.isError).toBe(true);
  });

  it('fails the in-flight call fast when the server crashes, naming the exit and stderr', async () => {
    pool = new McpPool([nodeServer('paged', ['--input-type=module', '-e', PAGED_SERVER])]);
    const err = await catchError(pool.callTool('paged', 't3', {}, { deadline: inMs(15000) }));
    expect(err.kind).toBe('unavailable');
    expect(err.message).toContain('exited with code 7');
    expect(err.message).toContain('fatal: out of cheese');
    expect(err.details.mayHaveReachedServer).toBe(true);
  });

  it('keeps retrying a server that will not start; calls fail at their deadline with its stderr', async () => {
    const script = "console.error('boom: missing API key'); process.exit(3)";
    pool = new McpPool([nodeServer('broken', ['-e', script])]);
    const restarted = nextEvent(pool, 'restart', (e) => e.server === 'broken');
    const err = await catchError(pool.callTool('broken', 'any', {}, { deadline: inMs(1500) }));
    expect(err.kind).toBe('unavailable');
    expect(err.message).toContain('boom: missing API key');
    expect(err.details.mayHaveReachedServer).toBe(false);
    expect(err.details.retryAfterMs).toBeGreaterThan(0);
    await restarted;
    expect(pool.status('broken')?.restarts).toBeGreaterThanOrEqual(1);
  });

  it('reports a command that does not exist', async () => {
    pool = new McpPool([{ kind: 'mcp-server', name: 'missing', transport: 'stdio', command: 'toolgate-no-such-command' }]);
    const report = await pool.start();
    expect(report.ready).toEqual([]);
    const err = await catchError(pool.callTool('missing', 'any', {}, { deadline: inMs(300) }));
    expect(err.kind).toBe('unavailable');
    expect(err.message).toContain('ENOENT');
  });
});

describe('process groups', () => {
  it('ends the whole group (grandchildren too) when the server dies, then restarts it', async () => {
    pool = new McpPool([nodeServer('wrapped', ['-e', WRAPPER])], { killGraceMs: 300 });
    await pool.callTool('wrapped', 'echo', { message: 'hi' }, { deadline: inMs(10000) });
    const leader = pool.status('wrapped')!.pid!;
    // wrapper, helper, server
    expect(groupMembers(leader).length).toBeGreaterThanOrEqual(3);

    const ready = nextEvent(pool, 'state', (e) => e.server === 'wrapped' && e.state === 'ready');
    process.kill(leader, 'SIGKILL');
    await ready;
    const result = await pool.callTool('wrapped', 'echo', { message: 'back' }, { deadline: inMs(10000) });
    expect(result.content).toEqual([{ type: 'text', text: 'Echo: back' }]);
    // close() also waits for the old group's end, which the crash started.
    const fresh = pool.status('wrapped')!.pid!;
    await pool.close();
    expect(groupMembers(leader)).toEqual([]);
    expect(groupMembers(fresh)).toEqual([]);
  });

  it('close() ends grandchildren that ignore SIGTERM', async () => {
    pool = new McpPool([nodeServer('wrapped', ['-e', WRAPPER], { prestart: true })], { killGraceMs: 300 });
    await pool.start();
    const leader = pool.status('wrapped')!.pid!;
    expect(groupMembers(leader).length).toBeGreaterThanOrEqual(3);
    await pool.close();
    expect(groupMembers(leader)).toEqual([]);
  });
});

describe('configuration changes', () => {
  it('keeps an unchanged server, applies pool bounds in place, restarts on a changed command line', async () => {
    const spec = nodeServer('ev', [EVERYTHING, 'stdio'], { prestart: true });
    pool = new McpPool([spec]);
    await pool.start();
    const pid = pool.status('ev')!.pid!;

    expect(await pool.updateServer({ ...spec })).toBe('unchanged');
    expect(await pool.updateServer({ ...spec, pool: { maxInFlight: 4 }, include: ['echo'] })).toBe('updated');
    expect(pool.status('ev')!.pid).toBe(pid);

    expect(await pool.updateServer({ ...spec, env: { EXAMPLE: '1' } })).toBe('restarted');
    const newPid = pool.status('ev')!.pid!;
    expect(newPid).not.toBe(pid);
    expect(groupMembers(pid)).toEqual([]);
    const env = await pool.callTool('ev', 'get-env', {}, { deadline: inMs(5000) });
    expect(JSON.stringify(env.content)).toContain('EXAMPLE');

    expect(await pool.removeServer('ev')).toBe(true);
    expect(groupMembers(newPid)).toEqual([]);
    expect(pool.status('ev')).toBeUndefined();
  });
});
