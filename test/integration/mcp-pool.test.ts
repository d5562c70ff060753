import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JSONRPCMessage, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catchError, inMs, nextEvent } from '../helpers/mcp-events.js';
import { groupMembers, EVERYTHING, FILESYSTEM } from '../helpers/processes.js';
import { McpPool, type McpServerState } from '../../src/mcp/pool.js';
import { Cancel } from '../../src/util/cancel.js';
import type { McpStdioServer } from '../../src/tools/mcp-server-schema.js';

const LONG_OP = 'trigger-long-running-operation';

// ---- helpers -------------------------------------------------------------------------------



function stdioEverything(name: string, extra: Partial<McpStdioServer> = {}): McpStdioServer {
  return { kind: 'mcp-server', name, transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], ...extra };
}


function untilState(pool: McpPool, server: string, state: McpServerState, ms = 10000): Promise<unknown> {
  if (pool.status(server)?.state === state) return Promise.resolve();
  return nextEvent(pool, 'state', (e) => e.server === server && e.state === state, ms);
}

const echo = (pool: McpPool, server: string, message: string, ms = 10000) =>
  pool.callTool(server, 'echo', { message }, { deadline: inMs(ms) });
const text = (result: { content: { type: string; text?: string }[] }): string =>
  result.content.map((c) => c.text ?? '').join('');

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** server-everything in Streamable HTTP (or legacy SSE) mode, as a child in its own group. */
async function startHttpEverything(port: number, mode: 'streamableHttp' | 'sse' = 'streamableHttp'): Promise<ChildProcess> {
  const child = spawn(process.execPath, [EVERYTHING, mode], {
    env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'], detached: true,
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('HTTP server did not start')), 15000);
    let seen = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (/listening on port|running on port/.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`HTTP server exited with ${String(code)}: ${seen}`));
    });
  });
  return child;
}

async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  process.kill(-child.pid, 'SIGKILL');
  await exited;
}

// ---- server-everything over stdio ------------------------------------------------------------

describe('server-everything over stdio', () => {
  type Traced = { server: string; direction: 'in' | 'out'; message: JSONRPCMessage };
  const trace: Traced[] = [];
  const traceEvents = new EventEmitter<{ message: [Traced] }>();
  /** The first traced message matching, already seen or yet to come (bounded). */
  const traced = (match: (t: Traced) => boolean, ms = 10000): Promise<Traced> => {
    const seen = trace.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('message not seen')), ms);
      const listener = (t: Traced): void => {
        if (!match(t)) return;
        clearTimeout(timer);
        traceEvents.off('message', listener);
        resolve(t);
      };
      traceEvents.on('message', listener);
    });
  };
  let pool: McpPool;

  beforeAll(async () => {
    pool = new McpPool([stdioEverything('everything', { prestart: true })], {
      trace: (server, direction, message) => {
        const t = { server, direction, message };
        trace.push(t);
        traceEvents.emit('message', t);
      },
    });
    const report = await pool.start();
    expect(report).toEqual({ ready: ['everything'], failed: [] });
  });

  afterAll(async () => {
    await pool.close();
  });

  it('is ready after start() and lists its tools with annotations', async () => {
    expect(pool.isReady()).toBe(true);
    const tools = await pool.listTools('everything');
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['echo', LONG_OP, 'get-sum']));
    expect(tools.find((t) => t.name === 'echo')?.annotations?.readOnlyHint).toBe(true);
  });

  it('multiplexes 50 concurrent calls over one child process', async () => {
    const pid = pool.status('everything')?.pid;
    expect(pid).toBeTypeOf('number');
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => echo(pool, 'everything', `m${i}`)));
    expect(results.map(text)).toEqual(Array.from({ length: 50 }, (_, i) => `Echo: m${i}`));
    expect(pool.status('everything')?.pid).toBe(pid);
    expect(groupMembers(pid!)).toHaveLength(1);
    // One handshake for all of them.
    expect(trace.filter((t) => t.server === 'everything' && 'method' in t.message && t.message.method === 'initialize')).toHaveLength(1);
  });

  it('delivers progress and returns the result', async () => {
    const progress: Progress[] = [];
    const result = await pool.callTool('everything', LONG_OP, { duration: 0.3, steps: 3 }, {
      deadline: inMs(10000), onProgress: (p) => progress.push(p),
    });
    expect(text(result)).toContain('Long running operation completed');
    // The SDK drops a progress notification that arrives in the same read as the response
    // (it removes the handler before the queued notification runs), so the last may be missing.
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress.map((p) => p.progress)).toEqual([1, 2, 3].slice(0, progress.length));
  });

  it('times out a slow tool, sends notifications/cancelled, and the server drops the answer', async () => {
    const progress: Progress[] = [];
    const err = await catchError(pool.callTool('everything', LONG_OP, { duration: 1.2, steps: 4 }, {
      deadline: inMs(450), onProgress: (p) => progress.push(p),
    }));
    expect(err.kind).toBe('timeout');
    const progressAtTimeout = progress.length;

    const request = trace.findLast((t) => t.direction === 'out' && 'method' in t.message && t.message.method === 'tools/call');
    expect(request).toBeDefined();
    const msg = request!.message as { id: number; params: { _meta: { progressToken: number } } };
    const cancelled = trace.find((t) => t.direction === 'out' && 'method' in t.message
      && t.message.method === 'notifications/cancelled' && t.message.params?.['requestId'] === msg.id);
    expect(cancelled).toBeDefined();

    // The tool ignores its abort signal and keeps sending progress to the end; the server's
    // protocol layer, having processed the cancel, then drops the response. Once the last
    // progress arrived, a later request's answer proves the response would have come by now.
    const token = msg.params._meta.progressToken;
    await traced((t) => t.direction === 'in' && 'method' in t.message && t.message.method === 'notifications/progress'
      && t.message.params?.['progressToken'] === token && t.message.params['progress'] === 4);
    await echo(pool, 'everything', 'after-cancel');
    const answered = trace.some((t) => t.direction === 'in' && 'id' in t.message && t.message.id === msg.id);
    expect(answered).toBe(false);
    // Progress is not delivered past the deadline.
    expect(progress.length).toBe(progressAtTimeout);
  });

  it('aborts a call through its signal', async () => {
    const cancel = new Cancel();
    // Abort at the first sign of life from the running tool.
    const err = await catchError(pool.callTool('everything', LONG_OP, { duration: 2, steps: 10 }, {
      deadline: inMs(10000), cancel, onProgress: () => cancel.abort(new Error('stop')),
    }));
    expect(err.kind).toBe('aborted');
    const request = trace.findLast((t) => t.direction === 'out' && 'method' in t.message && t.message.method === 'tools/call');
    const id = (request?.message as { id: number }).id;
    await traced((t) => t.direction === 'out' && 'method' in t.message && t.message.method === 'notifications/cancelled'
      && t.message.params?.['requestId'] === id);
  });

  it('reports a tool error result as tool_error with its text', async () => {
    const err = await catchError(pool.callTool('everything', 'get-sum', { a: 'x', b: 2 }, { deadline: inMs(5000) }));
    expect(err.kind).toBe('tool_error');
    expect(err.message.length).toBeGreaterThan(0);
    expect(err.details.result?.isError).toBe(true);
  });

  it('restarts a killed child; in-flight calls fail fast and the next call succeeds', async () => {
    const oldPid = pool.status('everything')!.pid!;
    const before = pool.status('everything')!.restarts;
    const inFlight = catchError(pool.callTool('everything', LONG_OP, { duration: 10, steps: 10 }, { deadline: inMs(15000) }));
    await new Promise<void>((resolve) => setImmediate(resolve));
    const restarted = nextEvent(pool, 'restart', (e) => e.server === 'everything');
    process.kill(oldPid, 'SIGKILL');

    const err = await inFlight;
    expect(err.kind).toBe('unavailable');
    expect(err.message).toContain('SIGKILL');
    await restarted;

    const result = await echo(pool, 'everything', 'again');
    expect(text(result)).toBe('Echo: again');
    const status = pool.status('everything')!;
    expect(status.pid).not.toBe(oldPid);
    expect(status.restarts).toBe(before + 1);
    expect(status.state).toBe('ready');
    expect(groupMembers(oldPid)).toEqual([]);
  });

  it('bounds in-flight calls and the queue, then fails with unavailable', async () => {
    const spec = stdioEverything('tight', { pool: { maxInFlight: 2, maxQueue: 1 } });
    expect(await pool.updateServer(spec)).toBe('added');
    const cancel = new Cancel();
    const slow = () => pool.callTool('tight', LONG_OP, { duration: 10, steps: 10 }, { deadline: inMs(15000), cancel });
    const running = [slow(), slow(), slow()].map((p) => catchError(p));
    await untilState(pool, 'tight', 'ready');
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(pool.status('tight')).toMatchObject({ inFlight: 2, queued: 1 });

    const refused = await catchError(echo(pool, 'tight', 'one too many'));
    expect(refused.kind).toBe('unavailable');
    expect(refused.details.mayHaveReachedServer).toBe(false);
    expect(refused.details.retryAfterMs).toBeGreaterThan(0);

    cancel.abort(new Error('stop'));
    expect((await Promise.all(running)).map((e) => e.kind)).toEqual(['aborted', 'aborted', 'aborted']);
    expect(text(await echo(pool, 'tight', 'free again'))).toBe('Echo: free again');
    const pid = pool.status('tight')!.pid!;
    expect(await pool.removeServer('tight')).toBe(true);
    expect(groupMembers(pid)).toEqual([]);
  });

  it('leaves no process behind after close()', async () => {
    const local = new McpPool([stdioEverything('a'), stdioEverything('b')]);
    await Promise.all([echo(local, 'a', 'x'), echo(local, 'b', 'y')]);
    const pids = local.statuses().map((s) => s.pid!);
    expect(pids.every((pid) => groupMembers(pid).length === 1)).toBe(true);
    await local.close();
    expect(pids.flatMap(groupMembers)).toEqual([]);
    expect(local.statuses()).toEqual([]);
    expect((await catchError(echo(local, 'a', 'closed'))).kind).toBe('unavailable');
  });
});

// ---- server-everything over Streamable HTTP ---------------------------------------------------

describe('server-everything over Streamable HTTP', () => {
  let server: ChildProcess | undefined;
  let port: number;
  let pool: McpPool;

  beforeAll(async () => {
    port = await freePort();
    server = await startHttpEverything(port);
    pool = new McpPool([{
      kind: 'mcp-server', name: 'web', transport: 'streamable-http', url: `http://127.0.0.1:${port}/mcp`,
      // Ping off: the test below shows recovery on the call path itself.
      pool: { pingIntervalMs: 0 },
    }]);
  });

  afterAll(async () => {
    await pool?.close();
    await stopChild(server);
  });

  it('connects lazily, lists tools and multiplexes calls over one session', async () => {
    expect(pool.status('web')?.state).toBe('idle');
    const tools = await pool.listTools('web');
    expect(tools.map((t) => t.name)).toContain('echo');
    const sessionId = pool.status('web')?.sessionId;
    expect(sessionId).toBeTypeOf('string');
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => echo(pool, 'web', `h${i}`)));
    expect(results.map(text)).toEqual(Array.from({ length: 20 }, (_, i) => `Echo: h${i}`));
    expect(pool.status('web')?.sessionId).toBe(sessionId);
  });

  it('times out over HTTP too', async () => {
    const err = await catchError(pool.callTool('web', LONG_OP, { duration: 2, steps: 2 }, { deadline: inMs(300) }));
    expect(err.kind).toBe('timeout');
  });

  it('recovers when the server restarts: the stale session is replaced and the call goes through', async () => {
    const oldSession = pool.status('web')?.sessionId;
    await stopChild(server);
    server = await startHttpEverything(port);
    const result = await echo(pool, 'web', 'after restart', 15000);
    expect(text(result)).toBe('Echo: after restart');
    expect(pool.status('web')?.sessionId).not.toBe(oldSession);
    expect(pool.status('web')?.restarts).toBeGreaterThanOrEqual(1);
  });
});

describe('server-everything over legacy SSE', () => {
  let server: ChildProcess | undefined;
  let pool: McpPool | undefined;

  afterAll(async () => {
    await pool?.close();
    await stopChild(server);
  });

  it('lists tools and calls one', async () => {
    const port = await freePort();
    server = await startHttpEverything(port, 'sse');
    pool = new McpPool([{ kind: 'mcp-server', name: 'old', transport: 'sse', url: `http://127.0.0.1:${port}/sse` }]);
    expect((await pool.listTools('old')).map((t) => t.name)).toContain('echo');
    expect(text(await echo(pool, 'old', 'sse'))).toBe('Echo: sse');
  });
});

// ---- server-filesystem over stdio -------------------------------------------------------------

describe('server-filesystem over stdio', () => {
  let dir: string;
  let pool: McpPool;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-fs-'));
    await writeFile(join(dir, 'hello.txt'), 'hello from the temp dir\n');
    pool = new McpPool([{ kind: 'mcp-server', name: 'files', transport: 'stdio', command: process.execPath, args: [FILESYSTEM, dir] }]);
  });

  afterAll(async () => {
    await pool?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('lists tools with their annotations (destructiveHint on writers)', async () => {
    const tools = await pool.listTools('files');
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('write_file')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.get('move_file')?.annotations?.destructiveHint).toBe(true);
    expect(byName.get('read_text_file')?.annotations?.readOnlyHint).toBe(true);
  });

  it('reads and writes inside the allowed directory and refuses outside it', async () => {
    const listing = await pool.callTool('files', 'list_directory', { path: dir }, { deadline: inMs(5000) });
    expect(text(listing)).toContain('hello.txt');
    await pool.callTool('files', 'write_file', { path: join(dir, 'new.txt'), content: 'written' }, { deadline: inMs(5000) });
    const read = await pool.callTool('files', 'read_text_file', { path: join(dir, 'new.txt') }, { deadline: inMs(5000) });
    expect(text(read)).toBe('written');
    const denied = await catchError(pool.callTool('files', 'read_text_file', { path: '/etc/hostname' }, { deadline: inMs(5000) }));
    expect(denied.kind).toBe('tool_error');
    expect(denied.message).toMatch(/denied|outside/i);
  });
});

// ---- results of the wrong shape ------------------------------------------------------------

describe('a server whose tools/call results are malformed', () => {
  const BAD = new URL('../fixtures/mcp/bad-result-server.mjs', import.meta.url).pathname;
  let pool: McpPool;

  beforeAll(async () => {
    pool = new McpPool([{ kind: 'mcp-server', name: 'bad', transport: 'stdio', command: process.execPath, args: [BAD], prestart: true }]);
    expect(await pool.start()).toEqual({ ready: ['bad'], failed: [] });
  });

  afterAll(async () => {
    await pool.close();
  });

  // The pool's light request path keeps the SDK's result check: a result that is not a
  // CallToolResult is a protocol error of that call, and the session keeps serving.
  it.each(['bad_text', 'bad_content'])('rejects %s as a protocol error and keeps the session', async (tool) => {
    const pid = pool.status('bad')!.pid;
    const err = await catchError(pool.callTool('bad', tool, {}, { deadline: inMs(5000) }));
    expect(err.kind).toBe('protocol');
    expect(err.message).toMatch(/invalid result|tools\/call/i);
    const ok = await pool.callTool('bad', 'good', {}, { deadline: inMs(5000) });
    expect(text(ok)).toBe('fine');
    expect(pool.status('bad')!.pid).toBe(pid);
  });
});
