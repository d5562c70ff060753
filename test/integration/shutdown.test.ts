import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { stringify } from 'yaml';
import { echoTool, httpTool } from '../helpers/app.js';
import { Upstream, json } from '../helpers/upstream.js';

/** The real server (node dist/server.js) as a child process of the test: signals, drain, exit code. */

interface Server {
  child: ChildProcess;
  url: string;
  dir: string;
  toolsDir: string;
  auditFile: string;
  /** Resolves with the first log line whose msg is `msg` and that passes `where` (lines already seen count). */
  logged(msg: string, where?: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started: ChildProcess[] = [];

async function startServer(tools: Record<string, unknown>, server: Record<string, unknown> = {}): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-shutdown-'));
  const toolsDir = join(dir, 'tools.d');
  mkdirSync(toolsDir);
  for (const [file, tool] of Object.entries(tools)) writeFileSync(join(toolsDir, file), stringify(tool));
  const auditFile = join(dir, 'audit.jsonl');
  const configFile = join(dir, 'gateway.yaml');
  writeFileSync(configFile, stringify({ server, audit: { file: auditFile }, tools: { watch: false } }));
  const child = spawn(process.execPath, ['dist/server.js'], {
    env: { PATH: process.env['PATH'] ?? '', TOOLGATE_CONFIG: configFile, TOOLGATE_TOOLS_DIR: toolsDir, PORT: '0', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  const lines: Record<string, unknown>[] = [];
  type Match = (l: Record<string, unknown>) => boolean;
  const waiters: { match: Match; resolve: (l: Record<string, unknown>) => void }[] = [];
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    lines.push(entry);
    for (const w of waiters.splice(0)) (w.match(entry) ? w.resolve(entry) : waiters.push(w));
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const logged = (msg: string, where: Match = () => true) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const match: Match = (l) => l['msg'] === msg && where(l);
      const seen = lines.find(match);
      if (seen) return resolve(seen);
      waiters.push({ match, resolve });
      void exited.then(({ code }) => reject(new Error(`server exited (${code}) before logging '${msg}': ${stderr}`)));
    });
  const listening = await logged('toolgate listening');
  return { child, url: String(listening['address']), dir, toolsDir, auditFile, logged, exited };
}

describe('the server process', () => {
  let up: Upstream;
  const held: ServerResponse[] = [];
  let arrived: (() => void) | undefined;

  beforeAll(async () => {
    // `npm test` builds first; a bare `npx vitest run` on a fresh clone builds here.
    if (!existsSync('dist/server.js')) execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
    up = await new Upstream().start();
    up.on((_req, res) => {
      held.push(res);
      arrived?.();
    });
    return async () => up.close();
  }, 120_000);

  afterEach(() => {
    // Only the processes this file started, and only if a failed test left one running.
    for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  const nextHeld = () => new Promise<ServerResponse>((resolve) => (arrived = () => resolve(held.shift() as ServerResponse)));
  const call = (url: string, tool: string, args: unknown) =>
    fetch(`${url}/v1/tools/${tool}/call`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });

  it('SIGHUP reloads tools.d', async () => {
    const s = await startServer({ 'echo.yaml': echoTool('p.echo') });
    expect((await fetch(`${s.url}/v1/tools/p.late`)).status).toBe(404);
    writeFileSync(join(s.toolsDir, 'late.yaml'), stringify(echoTool('p.late')));
    s.child.kill('SIGHUP');
    const reloaded = await s.logged('tools.d reloaded', (l) => l['generation'] === 2);
    expect(reloaded['added']).toEqual(['p.late']);
    expect((await call(s.url, 'p.late', { message: 'x' })).status).toBe(200);
    s.child.kill('SIGTERM');
    expect(await s.exited).toEqual({ code: 0, signal: null });
  });

  it('on SIGTERM: not ready, refuses new calls, lets the running call finish, flushes the audit log, exits 0', async () => {
    const s = await startServer({ 'held.yaml': httpTool('p.held', `${up.url}/hold`), 'echo.yaml': echoTool('p.echo') }, { drainTimeoutMs: 10000 });
    expect((await fetch(`${s.url}/readyz`)).status).toBe(200);
    const upstreamGotIt = nextHeld();
    const running = call(s.url, 'p.held', {});
    const res = await upstreamGotIt;

    s.child.kill('SIGTERM');
    await s.logged('shutting down: draining in-flight calls');
    const ready = await fetch(`${s.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'not_ready', checks: { draining: true } });
    const refused = await call(s.url, 'p.echo', { message: 'too late' });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('UNAVAILABLE');

    json(res, 200, { answer: 42 });
    const done = await running;
    expect(done.status).toBe(200);
    const body = (await done.json()) as { callId: string; status: string };
    expect(body.status).toBe('ok');

    expect(await s.exited).toEqual({ code: 0, signal: null });
    const audit = readFileSync(s.auditFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(audit.find((r) => r['callId'] === body.callId)).toMatchObject({ tool: 'p.held', outcome: 'ok' });
    expect(audit.some((r) => r['tool'] === 'p.echo' && r['outcome'] === 'error')).toBe(false); // refused before the pipeline
    await expect(fetch(`${s.url}/healthz`)).rejects.toThrow();
  });

  it('bounds the drain: a call still running after drainTimeoutMs is cut, audited, and the process exits 0', async () => {
    const s = await startServer({ 'held.yaml': httpTool('p.held', `${up.url}/hold`) }, { drainTimeoutMs: 200 });
    const upstreamGotIt = nextHeld();
    const running = call(s.url, 'p.held', {}).then(
      (r) => r.status,
      () => 'connection closed',
    );
    const res = await upstreamGotIt;
    const aborted = new Promise<void>((resolve) => res.once('close', () => resolve()));
    s.child.kill('SIGTERM');
    await s.logged('drain timed out: cutting the calls still running');
    await aborted; // the gateway aborted its upstream request
    expect(await running).toBe('connection closed');
    expect(await s.exited).toEqual({ code: 0, signal: null });
    const audit = readFileSync(s.auditFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(audit.find((r) => r['tool'] === 'p.held')).toMatchObject({ outcome: 'error' });
  });
});
