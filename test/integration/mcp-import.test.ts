import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { parseExposition, sampleValue } from '../helpers/metrics.js';
import { EVERYTHING, FILESYSTEM, groupMembers } from '../helpers/processes.js';
import { Upstream } from '../helpers/upstream.js';

interface Listed {
  name: string;
  description: string;
  sideEffect: string;
  idempotent: boolean;
  confirm: boolean | string;
  timeoutMs: number;
  mcp?: { server: string; tool: string; hash: string; held?: boolean };
}
interface CallBody {
  status: string;
  backend: string;
  policy: { tried: string[]; failover: boolean };
  result: { content: { type: string; text?: string; mimeType?: string }[] };
  confirmation: { id: string };
  error: { code: string; message: string; modelMessage: string };
}

const node = process.execPath;
const text = (body: CallBody) => body.result.content.map((c) => c.text ?? '').join('');

describe('MCP server files: import, calls and lifecycle through the HTTP API', () => {
  let gw: TestGateway;
  let shared: string;
  let upstream: Upstream;
  let closed = false;

  const everything = {
    kind: 'mcp-server', name: 'everything', transport: 'stdio', command: node, args: [EVERYTHING, 'stdio'], prestart: true,
    include: ['echo', 'get-*', 'trigger-long-running-operation'], exclude: ['get-env'],
    overrides: { 'trigger-long-running-operation': { timeoutMs: 400 } },
  };
  const files = () => ({
    kind: 'mcp-server', name: 'files', transport: 'stdio', command: node, args: [FILESYSTEM, shared], prestart: true,
    include: ['read_*', 'write_file', 'list_directory'], exclude: ['read_media_file'],
  });
  const tools = async (): Promise<Listed[]> => (await gw.app.inject({ method: 'GET', url: '/v1/tools' })).json<{ tools: Listed[] }>().tools;
  const pidOf = (server: string) => gw.app.gw.mcpPool.status(server)?.pid;
  const reload = async () => {
    await gw.app.inject({ method: 'POST', url: '/admin/reload' });
    await gw.app.gw.mcp.settled();
  };

  beforeAll(async () => {
    shared = mkdtempSync(join(tmpdir(), 'toolgate-mcp-shared-'));
    writeFileSync(join(shared, 'hello.txt'), 'hello from the shared dir\n');
    upstream = await new Upstream().on((_req, res) => {
      res.end(JSON.stringify({ from: 'http' }));
    }).start();
    gw = await startGateway({
      tools: {
        'everything.yaml': everything,
        'files.yaml': files(),
        'desktop.json': { mcpServers: { desk: { command: node, args: [FILESYSTEM, shared] } } },
        // An MCP backend beside an HTTP one: the first names a server nobody declared.
        'mixed.yaml': {
          name: 'mixed.echo', description: 'echo through MCP, else HTTP', sideEffect: 'read',
          inputSchema: { type: 'object', properties: { message: { type: 'string' } } },
          backends: [
            { id: 'ghost', priority: 0, mcp: { server: 'nowhere', tool: 'echo' } },
            { id: 'web', priority: 1, http: { url: `${upstream.url}/echo` } },
          ],
        },
        'direct.yaml': {
          name: 'direct.echo', description: 'echo through a declared MCP server', sideEffect: 'read',
          inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
          backends: [{ id: 'mcp', mcp: { server: 'everything', tool: 'echo' } }, { id: 'web', priority: 1, http: { url: `${upstream.url}/echo` } }],
        },
        // A server that cannot start, and a tool file that calls it.
        'broken.yaml': { kind: 'mcp-server', name: 'broken', transport: 'stdio', command: node, args: ['-e', 'process.exit(3)'] },
        'broken-call.yaml': {
          name: 'broken.call', description: 'calls a server that never comes up', sideEffect: 'read', timeoutMs: 600,
          breaker: { failureThreshold: 1, volumeThreshold: 1 },
          backends: [{ id: 'mcp', mcp: { server: 'broken', tool: 'anything' } }],
        },
        'tiny.yaml': {
          name: 'tiny.image', description: 'the tiny image, capped', sideEffect: 'read', result: { maxBytes: 64 },
          backends: [{ id: 'mcp', mcp: { server: 'everything', tool: 'get-tiny-image' } }],
        },
      },
    });
  });

  afterAll(async () => {
    if (!closed) await gw.close();
    await upstream.close();
    rmSync(shared, { recursive: true, force: true });
  });

  it('imports each server as <server>.<tool>, with include/exclude, and is ready once prestart servers are in', async () => {
    const names = (await tools()).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['everything.echo', 'everything.get-sum', 'everything.get-tiny-image', 'everything.trigger-long-running-operation']));
    expect(names).not.toContain('everything.get-env'); // excluded
    expect(names).not.toContain('everything.gzip-file-as-resource'); // not included
    expect(names).toEqual(expect.arrayContaining(['files.read_text_file', 'files.write_file', 'files.list_directory']));
    expect(names.filter((n) => n.startsWith('files.'))).not.toContain('files.move_file');
    expect(names).not.toContain('files.read_media_file');
    const openai = (await gw.app.inject({ method: 'GET', url: '/v1/tools?format=openai' })).json<{ tools: { function: { name: string } }[] }>();
    expect(openai.tools.map((t) => t.function.name)).toContain('everything__echo');

    const ready = await gw.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ checks: { mcp: 'ready' } });
  });

  it('derives side effects from annotations: read-only tools run, destructive ones are gated', async () => {
    const byName = new Map((await tools()).map((t) => [t.name, t]));
    expect(byName.get('everything.echo')).toMatchObject({ sideEffect: 'read', idempotent: true, confirm: false, mcp: { server: 'everything', tool: 'echo' } });
    expect(byName.get('files.write_file')).toMatchObject({ sideEffect: 'destructive', confirm: true });
    expect(byName.get('everything.trigger-long-running-operation')?.timeoutMs).toBe(400); // the override

    const echo = await gw.call('everything.echo', { message: 'hi' });
    expect(echo.statusCode).toBe(200);
    expect(echo.json<CallBody>()).toMatchObject({ status: 'ok', backend: 'everything' });
    expect(text(echo.json<CallBody>())).toBe('Echo: hi');

    const read = await gw.call('files.read_text_file', { path: join(shared, 'hello.txt') });
    expect(read.statusCode).toBe(200);
    expect(text(read.json<CallBody>())).toContain('hello from the shared dir');

    const target = join(shared, 'written.txt');
    const write = await gw.call('files.write_file', { path: target, content: 'approved write' });
    expect(write.statusCode).toBe(202);
    expect(existsSync(target)).toBe(false);
    const approved = await gw.app.inject({ method: 'POST', url: `/v1/confirmations/${write.json<CallBody>().confirmation.id}/approve`, payload: {} });
    expect(approved.statusCode).toBe(200);
    expect(readFileSync(target, 'utf8')).toBe('approved write');
  });

  it('validates arguments against the server schema, and maps tool errors and timeouts', async () => {
    const invalid = await gw.call('everything.get-sum', { a: 'one', b: 2 });
    expect(invalid.statusCode).toBe(422);

    const missing = await gw.call('files.read_text_file', { path: join(shared, 'no-such-file.txt') });
    expect(missing.statusCode).toBe(502);
    const err = missing.json<CallBody>().error;
    expect(err.code).toBe('UPSTREAM_ERROR');
    expect(err.message).toContain('ENOENT');
    expect(err.modelMessage).toContain('ENOENT'); // the tool's own text, for the model to act on

    const slow = await gw.call('everything.trigger-long-running-operation', { duration: 3, steps: 3 });
    expect(slow.statusCode).toBe(504);
    expect(slow.json<CallBody>().error.code).toBe('TIMEOUT');
    // The session survives the cancelled call.
    expect((await gw.call('everything.echo', { message: 'still here' })).statusCode).toBe(200);
  });

  it('passes images through, and drops what exceeds result.maxBytes with a marker', async () => {
    const image = await gw.call('everything.get-tiny-image', {});
    expect(image.statusCode).toBe(200);
    expect(image.json<CallBody>().result.content).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'image', mimeType: 'image/png' })]));

    const capped = await gw.call('tiny.image', {});
    expect(capped.statusCode).toBe(200);
    const content = capped.json<CallBody>().result.content;
    expect(content.some((c) => c.type === 'image')).toBe(false);
    expect(content.at(-1)?.text).toMatch(/^\[truncated: .*image.* dropped, over the 64-byte result limit\]$/);
  });

  it('lets a tool file name an MCP tool as a backend, beside an HTTP one', async () => {
    const direct = await gw.call('direct.echo', { message: 'via file' });
    expect(direct.json<CallBody>()).toMatchObject({ status: 'ok', backend: 'mcp' });
    expect(text(direct.json<CallBody>())).toBe('Echo: via file');

    // The undeclared server answers UNAVAILABLE without having been reached: the call fails over.
    const mixed = await gw.call('mixed.echo', { message: 'x' });
    expect(mixed.statusCode).toBe(200);
    expect(mixed.json<CallBody>()).toMatchObject({ backend: 'web', policy: { tried: ['ghost', 'web'], failover: true } });
  });

  it('multiplexes 50 concurrent calls over the one child process', async () => {
    const pid = pidOf('everything');
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => gw.call('everything.echo', { message: `m${i}` })));
    expect(results.map((r) => text(r.json<CallBody>()))).toEqual(Array.from({ length: 50 }, (_, i) => `Echo: m${i}`));
    expect(pidOf('everything')).toBe(pid);
    expect(groupMembers(pid!)).toHaveLength(1);
  });

  it('answers UNAVAILABLE with Retry-After while a server is down, without counting it against the breaker', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await gw.call('broken.call', {});
      expect(res.statusCode).toBe(503);
      expect(res.json<CallBody>().error.code).toBe('UNAVAILABLE');
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    const view = (await gw.app.inject({ method: 'GET', url: '/v1/tools/broken.call' })).json<{ backends: { state: string }[] }>();
    expect(view.backends[0]?.state).toBe('closed');
    const samples = parseExposition((await gw.app.inject({ method: 'GET', url: '/metrics' })).body);
    expect(sampleValue(samples, 'toolgate_mcp_restarts_total', { server: 'broken' })).toBeGreaterThanOrEqual(1);
    // Not a prestart server: it does not hold readiness.
    expect((await gw.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });

  it('loads the Claude-Desktop mcpServers form', async () => {
    const res = await gw.call('desk.list_allowed_directories', {});
    expect(res.statusCode).toBe(200);
    expect(text(res.json<CallBody>())).toContain(shared);
  });

  it('reports each server state in toolgate_mcp_connections', async () => {
    const samples = parseExposition((await gw.app.inject({ method: 'GET', url: '/metrics' })).body);
    expect(sampleValue(samples, 'toolgate_mcp_connections', { server: 'everything', state: 'ready' })).toBe(1);
    expect(sampleValue(samples, 'toolgate_mcp_connections', { server: 'everything', state: 'restarting' })).toBe(0);
    expect(sampleValue(samples, 'toolgate_mcp_connections', { server: 'desk', state: 'ready' })).toBe(1);
  });

  it('rejects a server file with an unknown key or a bad override, with file, line and path; the last good version serves on', async () => {
    gw.writeTool('files.yaml', { ...files(), overrides: { write_file: { sideEffect: 'dangerous', colour: 'red' } } });
    const res = await gw.app.inject({ method: 'POST', url: '/admin/reload' });
    const errors = res.json<{ errors: { file: string; line?: number; path: string; message: string }[] }>().errors;
    expect(errors).toEqual(expect.arrayContaining([
      expect.objectContaining({ file: join(gw.toolsDir, 'files.yaml'), path: '/overrides/write_file/colour', message: "unknown key 'colour'", line: expect.any(Number) }),
      expect.objectContaining({ path: '/overrides/write_file/sideEffect' }),
    ]));
    expect((await tools()).map((t) => t.name)).toContain('files.write_file');
    gw.writeTool('files.yaml', files());
    await reload();
  });

  it('restarts only the server whose file changed how it is reached; a removed file ends its server', async () => {
    const [everythingPid, filesPid, deskPid] = [pidOf('everything'), pidOf('files'), pidOf('desk')];
    // Overrides only: no restart, the import is redone in place.
    gw.writeTool('files.yaml', { ...files(), overrides: { write_file: { sideEffect: 'write', confirm: false } } });
    await reload();
    expect(pidOf('files')).toBe(filesPid);
    expect((await tools()).find((t) => t.name === 'files.write_file')).toMatchObject({ sideEffect: 'write', confirm: false });

    gw.writeTool('files.yaml', { ...files(), env: { TOOLGATE_TEST: '1' } });
    await reload();
    expect(pidOf('files')).not.toBe(filesPid);
    expect(groupMembers(filesPid!)).toEqual([]);
    expect(pidOf('everything')).toBe(everythingPid);
    expect((await gw.call('files.list_directory', { path: shared })).statusCode).toBe(200);

    unlinkSync(join(gw.toolsDir, 'desktop.json'));
    const res = await gw.app.inject({ method: 'POST', url: '/admin/reload' });
    expect(res.json<{ removed: string[] }>().removed).toEqual(expect.arrayContaining(['desk.list_allowed_directories', 'desk.read_text_file']));
    expect(gw.app.gw.mcpPool.status('desk')).toBeUndefined();
    await gw.app.gw.mcp.settled();
    expect(groupMembers(deskPid!)).toEqual([]);
  });

  it('audits the imports as reloads that list the added tools', async () => {
    const reloads = (await gw.audit()).filter((r) => r['event'] === 'reload' && Array.isArray(r['added']));
    const added = reloads.flatMap((r) => r['added'] as string[]);
    expect(added).toEqual(expect.arrayContaining(['everything.echo', 'files.write_file', 'desk.list_allowed_directories']));
  });

  it('leaves no child process behind when the gateway closes', async () => {
    const pids = gw.app.gw.mcpPool.statuses().filter((s) => s.state === 'ready').map((s) => s.pid);
    expect(pids.length).toBeGreaterThanOrEqual(2);
    expect(pids.every((pid) => pid !== undefined && groupMembers(pid).length > 0)).toBe(true);
    closed = true;
    await gw.close();
    expect(pids.flatMap((pid) => groupMembers(pid!))).toEqual([]);
  });
});
