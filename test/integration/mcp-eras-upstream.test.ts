import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { formatReport } from '../../src/cli/format.js';
import { runCheck } from '../../src/cli/run.js';
import { McpPool } from '../../src/mcp/pool.js';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { parseExposition, sampleValue } from '../helpers/metrics.js';
import { EVERYTHING, FILESYSTEM } from '../helpers/processes.js';
import { untilAsync } from '../helpers/wait.js';
import { adminMcpView } from '../helpers/mcp-admin.js';

// The pool against upstream servers of both MCP eras: v2-SDK servers that speak only 2026-07-28
// (Modern), only 2025 (legacy) or both, over stdio and Streamable HTTP, a legacy server that exits
// on the server/discover probe, one that speaks only a revision toolgate does not, and the
// reference servers server-everything and server-filesystem.

const ADMIN = 'eras-admin-key-0123456789';
const AGENT = 'eras-agent-key-0123456789';
const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
const node = process.execPath;
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/mcp/${name}`, import.meta.url));
const V2 = fixture('v2-server.mjs');
const ERAS = ['modern', 'legacy', 'dual'] as const;
/** What each fixture era agrees with the pool: the newest revision both speak. */
const EXPECTED: Record<(typeof ERAS)[number], { revision: string; era: string }> = {
  modern: { revision: MODERN, era: 'modern' },
  legacy: { revision: LEGACY, era: 'legacy' },
  dual: { revision: MODERN, era: 'modern' },
};


/** Starts the v2 fixture over HTTP and resolves with its port once it listens. */
async function startHttp(era: string, log: string, port = 0): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(node, [V2, '--era', era, '--transport', 'http', '--port', String(port), '--log', log], { stdio: ['ignore', 'ignore', 'pipe'] });
  const listening = await new Promise<number>((resolve, reject) => {
    let text = '';
    child.stderr?.on('data', (c: Buffer) => {
      text += c.toString('utf8');
      const m = /listening on (\d+)/.exec(text);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`v2 fixture (${era}) exited with ${code}: ${text}`)));
  });
  return { child, port: listening };
}

function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('the pool speaks both MCP eras upstream', () => {
  let gw: TestGateway;
  let dir = '';
  let filesDir = '';
  const http = new Map<string, { child: ChildProcess; port: number }>();
  const logOf = (name: string) => join(dir, `${name}.log`);
  /** Requests of `method` the fixture behind `name` received, over all its processes. */
  const received = (name: string, method: string): number =>
    existsSync(logOf(name)) ? readFileSync(logOf(name), 'utf8').split('\n').filter((l) => l.endsWith(` ${method}`)).length : 0;

  const admin = { authorization: `Bearer ${ADMIN}` };
  const { view, server } = adminMcpView(() => gw, ADMIN);
  const metrics = async () => parseExposition((await gw.app.inject({ method: 'GET', url: '/metrics', headers: admin })).body);
  const toolView = async (name: string) => {
    const res = await gw.app.inject({ method: 'GET', url: `/v1/tools/${encodeURIComponent(name)}`, headers: { authorization: `Bearer ${AGENT}` } });
    expect(res.statusCode).toBe(200);
    return res.json<{ backends: { kind: string; server?: string; serverState?: string; protocolVersion?: string | null }[] }>();
  };
  const listed = async (): Promise<string[]> => {
    const res = await gw.app.inject({ method: 'GET', url: '/v1/tools', headers: { authorization: `Bearer ${AGENT}` } });
    return res.json<{ tools: { name: string }[] }>().tools.map((t) => t.name);
  };
  const callText = async (tool: string, args: Record<string, unknown>): Promise<string> => {
    const res = await gw.call(tool, args, { key: AGENT });
    expect(res.statusCode, `${tool}: ${res.body}`).toBe(200);
    const body = res.json<{ result: { content: { type: string; text?: string }[] } }>();
    return body.result.content.map((c) => c.text ?? '').join('');
  };
  /** The revision shows alike in /admin/mcp, GET /v1/tools/{name} and toolgate_mcp_server_info. */
  async function expectRevision(name: string, tool: string, revision: string, transport: string): Promise<void> {
    const s = await server(name);
    expect(s).toMatchObject({ state: 'up', protocolVersion: revision, lastError: null });
    const backend = (await toolView(tool)).backends.find((b) => b.kind === 'mcp');
    expect(backend).toMatchObject({ server: name, serverState: 'up', protocolVersion: revision });
    expect(sampleValue(await metrics(), 'toolgate_mcp_server_info', { server: name, transport, protocol_version: revision })).toBe(1);
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-eras-'));
    const files = mkdtempSync(join(tmpdir(), 'toolgate-eras-files-'));
    filesDir = files;
    writeFileSync(join(files, 'hello.txt'), 'hello from the filesystem server');
    const tools: Record<string, unknown> = {};
    for (const era of ERAS) {
      const overrides = { slow: { timeoutMs: 600 } };
      tools[`s-${era}.yaml`] = { kind: 'mcp-server', name: `s-${era}`, transport: 'stdio', command: node, args: [V2, '--era', era, '--log', join(dir, `s-${era}.log`)], prestart: true, overrides };
      const started = await startHttp(era, join(dir, `h-${era}.log`));
      http.set(`h-${era}`, started);
      tools[`h-${era}.yaml`] = { kind: 'mcp-server', name: `h-${era}`, transport: 'streamable-http', url: `http://127.0.0.1:${started.port}/mcp`, prestart: true, overrides };
    }
    tools['exit.yaml'] = { kind: 'mcp-server', name: 'exit', transport: 'stdio', command: node, args: [fixture('exit-on-probe-server.mjs')], env: { LOG: join(dir, 'exit.log') }, prestart: true };
    tools['future.yaml'] = { kind: 'mcp-server', name: 'future', transport: 'stdio', command: node, args: [fixture('future-server.mjs')] };
    tools['future-call.yaml'] = { name: 'future.call', description: 'a tool of a server from the future', sideEffect: 'read', timeoutMs: 3000, backends: [{ id: 'mcp', mcp: { server: 'future', tool: 'echo' } }] };
    tools['everything.yaml'] = { kind: 'mcp-server', name: 'everything', transport: 'stdio', command: node, args: [EVERYTHING, 'stdio'], prestart: true };
    tools['files.yaml'] = {
      kind: 'mcp-server', name: 'files', transport: 'stdio', command: node, args: [FILESYSTEM, files], prestart: true,
      overrides: { read_text_file: { sideEffect: 'read' } },
    };
    gw = await startGateway({
      config: { auth: { keys: [{ id: 'ops', key: ADMIN, roles: ['admin'] }, { id: 'bot', key: AGENT, roles: ['agent'] }] } },
      tools,
    });
  }, 60000);
  afterAll(async () => {
    await gw?.close();
    await Promise.all([...http.values()].map((h) => stop(h.child)));
  });

  for (const transport of ['stdio', 'streamable-http'] as const) {
    for (const era of ERAS) {
      const name = `${transport === 'stdio' ? 's' : 'h'}-${era}`;
      const { revision, era: agreed } = EXPECTED[era];
      it(`${era} server over ${transport}: imported, listed, called, at ${revision}`, async () => {
        const names = await listed();
        for (const tool of ['echo', 'add', 'era', 'slow']) expect(names).toContain(`${name}.${tool}`);
        expect(await callText(`${name}.echo`, { text: `hi ${name}` })).toBe(`hi ${name}`);
        expect(await callText(`${name}.add`, { a: 2, b: 40 })).toBe('42');
        expect(await callText(`${name}.era`, {})).toBe(agreed);
        await expectRevision(name, `${name}.echo`, revision, transport);
        // Probed once at most, and never once per call.
        expect(received(name, 'server/discover')).toBeLessThanOrEqual(1);
        expect(received(name, 'initialize')).toBe(agreed === 'legacy' ? 1 : 0);
      });
    }
  }

  for (const name of ['s-modern', 'h-modern', 's-dual']) {
    it(`${name} (2026-07-28): a call past its deadline is 504 TIMEOUT in time, and the connection keeps serving`, async () => {
      const started = Date.now();
      const res = await gw.call(`${name}.slow`, { ms: 3000 }, { key: AGENT });
      expect(res.statusCode, res.body).toBe(504);
      expect(res.json<{ error: { code: string } }>().error.code).toBe('TIMEOUT');
      expect(Date.now() - started).toBeLessThan(1500);
      expect(await callText(`${name}.slow`, { ms: 10 })).toBe('slept 10');
      expect(await callText(`${name}.era`, {})).toBe('modern');
      expect((await server(name)).restarts).toBe(0);
    });
  }

  it('no restart loop: every server that can connect stays up with 0 restarts', async () => {
    await new Promise((r) => setTimeout(r, 3000));
    for (const s of await view()) {
      if (s.name === 'future') continue;
      expect(s, s.name).toMatchObject({ state: 'up', restarts: 0, lastError: null });
    }
    const samples = await metrics();
    for (const era of ERAS) expect(sampleValue(samples, 'toolgate_mcp_restarts_total', { server: `s-${era}` }) ?? 0).toBe(0);
  });

  it('a legacy stdio server that exits on the server/discover probe ends up connected as legacy', async () => {
    expect(received('exit', 'server/discover')).toBe(1);
    expect(received('exit', 'initialize')).toBe(1);
    expect(await callText('exit.echo', { text: 'still here' })).toBe('still here');
    await expectRevision('exit', 'exit.echo', LEGACY, 'stdio');
  });

  it('server-everything and server-filesystem (1.x-SDK servers): imported, called, legacy, their revision shown', async () => {
    expect(await callText('everything.echo', { message: 'ping' })).toContain('ping');
    expect(await callText('files.read_text_file', { path: join(filesDir, 'hello.txt') })).toContain('hello from the filesystem server');
    for (const [name, tool] of [['everything', 'everything.echo'], ['files', 'files.read_text_file']] as const) {
      // They answer the probe -32601 (no such method): legacy, at the newest 2025 revision.
      await expectRevision(name, tool, LEGACY, 'stdio');
    }
  });

  it('a server speaking only a revision toolgate does not: failed, saying which revisions each side speaks', async () => {
    await gw.call('future.call', { text: 'x' }, { key: AGENT }); // a lazy server: the call starts it
    await untilAsync(async () => (await server('future')).state === 'failed', 'future: failed', 8000);
    const s = await server('future');
    expect(s.protocolVersion).toBeNull();
    expect(s.lastError).toContain('no common protocol version');
    expect(s.lastError).toContain('2099-01-01');
    expect(s.lastError).toContain(`toolgate speaks ${MODERN}, ${LEGACY}`);
    expect(s.restarts).toBeLessThanOrEqual(1);
    const started = Date.now();
    const res = await gw.call('future.call', { text: 'x' }, { key: AGENT });
    expect(res.statusCode).toBe(503);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(res.json<{ error: { message: string } }>().error.message).toContain('2099-01-01');
    const backend = (await toolView('future.call')).backends[0];
    expect(backend).toMatchObject({ serverState: 'failed', protocolVersion: null });
    expect(sampleValue(await metrics(), 'toolgate_mcp_server_info', { server: 'future', transport: 'stdio', protocol_version: '' })).toBe(1);
  });

  for (const era of ERAS) {
    it(`a killed ${era} stdio server comes back in the same era with no second server/discover`, async () => {
      const name = `s-${era}`;
      const before = gw.app.gw.mcpPool.status(name);
      expect(before?.pid).toBeDefined();
      const discovers = received(name, 'server/discover');
      process.kill(-(before?.pid ?? 0), 'SIGKILL');
      await untilAsync(async () => {
        const now = gw.app.gw.mcpPool.status(name);
        return now?.state === 'ready' && now.pid !== before?.pid;
      }, `${name}: back up`, 10000);
      expect(await callText(`${name}.era`, {})).toBe(EXPECTED[era].era);
      expect(received(name, 'server/discover')).toBe(discovers);
      await expectRevision(name, `${name}.echo`, EXPECTED[era].revision, 'stdio');
      expect((await server(name)).restarts).toBe(1);
    });
  }

  for (const era of ERAS) {
    it(`a ${era} HTTP server that restarts is reached again in the same era with no second server/discover`, async () => {
      const name = `h-${era}`;
      const old = http.get(name);
      if (!old) throw new Error(`no fixture ${name}`);
      const discovers = received(name, 'server/discover');
      await stop(old.child);
      http.set(name, await startHttp(era, logOf(name), old.port));
      await untilAsync(async () => {
        const res = await gw.call(`${name}.era`, {}, { key: AGENT });
        return res.statusCode === 200;
      }, `${name}: answering again`, 10000);
      expect(await callText(`${name}.era`, {})).toBe(EXPECTED[era].era);
      expect(received(name, 'server/discover')).toBe(discovers);
      await expectRevision(name, `${name}.echo`, EXPECTED[era].revision, 'streamable-http');
    });
  }

  it('a hot change of the tool list is picked up: list_changed (2025) and the subscriptions/listen stream (2026-07-28)', async () => {
    for (const name of ['s-modern', 's-legacy', 's-dual', 'h-modern', 'h-dual']) {
      expect(await listed()).not.toContain(`${name}.extra`);
      expect(await callText(`${name}.add_tool`, {})).toBe('added');
      await untilAsync(async () => (await listed()).includes(`${name}.extra`), `${name}.extra listed`, 8000);
      expect(await callText(`${name}.extra`, {})).toBe('extra');
    }
    if (received('s-modern', 'subscriptions/listen') < 1) throw new Error('no subscriptions/listen stream was opened');
  });

  it('a remembered 2026-07-28 verdict that no longer holds (the server now speaks only 2025) is dropped: one new probe, then legacy', async () => {
    const name = 'h-dual';
    const old = http.get(name);
    if (!old) throw new Error(`no fixture ${name}`);
    const discovers = received(name, 'server/discover');
    await stop(old.child);
    // Same URL, so the same connection: only the first answer can tell.
    http.set(name, await startHttp('legacy', logOf(name), old.port));
    await untilAsync(async () => (await gw.call(`${name}.era`, {}, { key: AGENT })).statusCode === 200, `${name}: answering`, 10000);
    expect(await callText(`${name}.era`, {})).toBe('legacy');
    expect(received(name, 'server/discover')).toBe(discovers + 1);
    expect(received(name, 'initialize')).toBeGreaterThanOrEqual(1);
    await expectRevision(name, `${name}.echo`, LEGACY, 'streamable-http');
  });
  it('a changed server file re-probes: the legacy server, now started Modern-only, is reached at 2026-07-28', async () => {
    const name = 's-legacy';
    const discovers = received(name, 'server/discover');
    gw.writeTool(`${name}.yaml`, { kind: 'mcp-server', name, transport: 'stdio', command: node, args: [V2, '--era', 'modern', '--log', logOf(name)], prestart: true });
    const res = await gw.app.inject({ method: 'POST', url: '/admin/reload', headers: admin });
    expect(res.statusCode, res.body).toBe(200);
    await untilAsync(async () => (await server(name)).protocolVersion === MODERN, `${name}: Modern`, 10000);
    expect(await callText(`${name}.era`, {})).toBe('modern');
    expect(received(name, 'server/discover')).toBe(discovers + 1);
    await expectRevision(name, `${name}.echo`, MODERN, 'stdio');
  });
});

describe('a legacy stdio server silent on the server/discover probe', () => {
  let pool: McpPool | undefined;
  afterAll(async () => {
    await pool?.close();
  });

  it('is taken for a legacy one once the probe times out (bounded by the connect timeout), and not probed again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-silent-'));
    const log = join(dir, 'silent.log');
    pool = new McpPool(
      [{ kind: 'mcp-server', name: 'silent', transport: 'stdio', command: node, args: [fixture('exit-on-probe-server.mjs')], env: { SILENT: '1', LOG: log } }],
      { connectTimeoutMs: 1500 },
    );
    const started = Date.now();
    const tools = await pool.listTools('silent', { deadline: Date.now() + 8000 });
    expect(tools.map((t) => t.name)).toEqual(['echo']);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(pool.status('silent')).toMatchObject({ state: 'ready', protocolVersion: LEGACY, era: 'legacy', restarts: 0 });
    const methods = () => readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => l.split(' ')[1]);
    expect(methods().filter((m) => m === 'server/discover')).toHaveLength(1);
    const pid = pool.status('silent')?.pid ?? 0;
    process.kill(-pid, 'SIGKILL');
    await untilAsync(async () => {
      const s = pool?.status('silent');
      return s?.state === 'ready' && s.pid !== pid;
    }, 'silent: back up', 8000);
    const result = await pool.callTool('silent', 'echo', { text: 'again' }, { deadline: Date.now() + 3000 });
    expect(result.content).toEqual([{ type: 'text', text: 'again' }]);
    // The legacy verdict is kept: the new process gets initialize at once, no probe and no wait.
    expect(methods().filter((m) => m === 'server/discover')).toHaveLength(1);
    expect(methods().filter((m) => m === 'initialize')).toHaveLength(2);
  });
});

describe('toolgate check --connect in both eras', () => {
  it('connects a Modern-only, a legacy-only and a dual server once each and shows each revision; the 2099-only one is an error saying why', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-check-eras-'));
    for (const era of ERAS) {
      writeFileSync(join(dir, `${era}.yaml`), stringify({ kind: 'mcp-server', name: era, transport: 'stdio', command: node, args: [V2, '--era', era], include: ['*'] }));
    }
    writeFileSync(join(dir, 'future.yaml'), stringify({ kind: 'mcp-server', name: 'future', transport: 'stdio', command: node, args: [fixture('future-server.mjs')], include: ['*'] }));
    const report = await runCheck({ toolsDir: dir, env: {}, connectTimeoutMs: 5000 });
    const text = formatReport(report);
    for (const era of ERAS) {
      const s = report.mcpServers.find((m) => m.name === era);
      expect(s?.connect, era).toMatchObject({ ok: true, protocolVersion: EXPECTED[era].revision, tools: 5 });
      expect(text).toMatch(new RegExp(`${era} +stdio .*up \\(${EXPECTED[era].revision}, 5 tools\\)`));
    }
    expect(report.ok).toBe(false);
    expect(report.errors).toHaveLength(1);
    expect(report.errors[0]?.message).toContain("MCP server 'future' cannot connect: no common protocol version");
    expect(report.errors[0]?.message).toContain('2099-01-01');
  }, 20000);
});
