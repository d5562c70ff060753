import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseArgs, UsageError } from '../../src/cli/args.js';
import { formatReport } from '../../src/cli/format.js';
import { runCheck } from '../../src/cli/run.js';
import { createLogger } from '../../src/logger.js';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { lineSink } from '../helpers/log-lines.js';
import { parseExposition, sampleValue } from '../helpers/metrics.js';
import { EVERYTHING } from '../helpers/processes.js';
import { Upstream } from '../helpers/upstream.js';
import { untilAsync } from '../helpers/wait.js';
import { adminMcpView, type ServerView } from '../helpers/mcp-admin.js';

// GET /admin/mcp against real servers that cannot connect, each for its own reason, and one that
// can: the cause is shown in words, logged once per state change, and a version mismatch is not
// a restart loop.

const ADMIN = 'admin-key-0123456789';
const AGENT = 'agent-key-0123456789';
const TOKEN = 'tok-s3cr3t-abcdef-123456';
const node = process.execPath;
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/mcp/${name}`, import.meta.url));


describe('GET /admin/mcp: every declared server and why it is not up', () => {
  let gw: TestGateway;
  let web: Upstream;
  const lines: string[] = [];

  const { view, server } = adminMcpView(() => gw, ADMIN);
  const waitFor = (name: string, ok: (s: ServerView) => boolean, what: string) =>
    untilAsync(async () => ok(await server(name)), `${name}: ${what}`, 8000);
  const logged = () => lines.map((l) => JSON.parse(l) as { level: number; msg: string; server?: string; state?: string });

  beforeAll(async () => {
    web = await new Upstream().on((_req, res) => {
      res.statusCode = 404;
      res.end('no MCP endpoint here');
    }).start();
    gw = await startGateway({
      config: { auth: { keys: [{ id: 'ops', key: ADMIN, roles: ['admin'] }, { id: 'bot', key: AGENT, roles: ['agent'] }] } },
      env: { FIXTURE_TOKEN: TOKEN },
      logger: createLogger('info', new Set(), lineSink(lines)),
      tools: {
        'typo.yaml': { kind: 'mcp-server', name: 'typo', transport: 'stdio', command: 'nodee', args: ['server.js'], prestart: true },
        'typo-call.yaml': {
          name: 'typo.call', description: 'a tool of the misspelt server', sideEffect: 'read', timeoutMs: 1500,
          backends: [{ id: 'mcp', mcp: { server: 'typo', tool: 'echo' } }],
        },
        'crash.yaml': {
          kind: 'mcp-server', name: 'crash', transport: 'stdio', command: node, args: [fixture('crash-server.mjs')],
          env: { FIXTURE_TOKEN: '${env:FIXTURE_TOKEN}' }, prestart: true,
        },
        'web.yaml': { kind: 'mcp-server', name: 'web', transport: 'streamable-http', url: `${web.url}/mcp`, prestart: true },
        'modern.yaml': { kind: 'mcp-server', name: 'modern', transport: 'stdio', command: node, args: [fixture('modern-only-server.mjs')], prestart: true },
        'modern-answer.yaml': {
          kind: 'mcp-server', name: 'modern-answer', transport: 'stdio', command: node, args: [fixture('modern-only-server.mjs')], env: { ANSWER: '1' }, prestart: true,
        },
        'modern-call.yaml': {
          name: 'modern.call', description: 'a tool of the server with no common version', sideEffect: 'read', timeoutMs: 5000,
          backends: [{ id: 'mcp', mcp: { server: 'modern', tool: 'echo' } }],
        },
        'everything.yaml': { kind: 'mcp-server', name: 'everything', transport: 'stdio', command: node, args: [EVERYTHING, 'stdio'], prestart: true },
      },
    });
  }, 20000);
  afterAll(async () => {
    await gw?.close();
    await web?.close();
  });

  it('a misspelt command: backoff, the spawn error, the next try, one warn line and calls that name it', async () => {
    await waitFor('typo', (s) => s.restarts >= 3, 'three restarts');
    const typo = await server('typo');
    expect(typo).toMatchObject({ transport: 'stdio', state: 'backoff', protocolVersion: null, tools: 0 });
    expect(typo.lastError).toContain('spawn nodee ENOENT');
    await waitFor('typo', (s) => s.nextRetryAt !== null, 'a scheduled retry');
    const next = Date.parse((await server('typo')).nextRetryAt ?? '');
    expect(next).toBeGreaterThan(Date.now() - 1000);
    expect(next).toBeLessThan(Date.now() + 31_000);

    // One warn line for the change to backoff, not one per retry.
    const warns = logged().filter((l) => l.level === 40 && l.server === 'typo' && l.state === 'backoff');
    expect(warns).toHaveLength(1);
    expect(warns[0]?.msg).toContain('spawn nodee ENOENT');

    const res = await gw.call('typo.call', {}, { key: AGENT });
    expect(res.statusCode).toBe(503);
    expect(res.json<{ error: { message: string } }>().error.message).toContain('nodee ENOENT');
  });

  it('a server that exits: the exit code and the stderr tail, its secret masked', async () => {
    await waitFor('crash', (s) => (s.lastError ?? '').includes('code 3'), 'the exit code');
    const crash = await server('crash');
    expect(crash.state).toBe('backoff');
    expect(crash.lastError).toContain('exited with code 3');
    expect(crash.lastError).toContain('fatal: login refused for token=[REDACTED]');
    expect(crash.lastError).toContain('giving up');
    expect(JSON.stringify(await view())).not.toContain(TOKEN);
    expect(lines.join('\n')).not.toContain(TOKEN);
  });

  it('a URL that answers 404: the status and the start of the body', async () => {
    await waitFor('web', (s) => s.lastError !== null, 'a failed attempt');
    const w = await server('web');
    expect(w).toMatchObject({ transport: 'streamable-http', state: 'backoff', tools: 0 });
    expect(w.lastError).toContain('HTTP 404');
    expect(w.lastError).toContain('no MCP endpoint here');
  });

  it('a server with no common protocol version: failed, retried slowly, saying so', async () => {
    await waitFor('modern', (s) => s.state === 'failed', 'failed');
    const before = await server('modern');
    expect(before.lastError).toMatch(/protocol version/);
    expect(before.lastError).toContain('-32022');
    expect(before.lastError).toContain('2026-07-28');
    expect(Date.parse(before.nextRetryAt ?? '') - Date.now()).toBeGreaterThan(30_000);
    await new Promise((r) => setTimeout(r, 2500));
    const after = await server('modern');
    expect(after.state).toBe('failed');
    expect(after.restarts).toBe(before.restarts);
    expect(logged().filter((l) => l.server === 'modern' && l.state === 'failed' && l.level === 40)).toHaveLength(1);
    const metrics = parseExposition((await gw.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${ADMIN}` } })).body);
    expect(sampleValue(metrics, 'toolgate_mcp_restarts_total', { server: 'modern' }) ?? 0).toBe(after.restarts);
    expect(after.restarts).toBeLessThanOrEqual(1);

    // A call does not wait out its deadline for the slow retry: it fails at once, saying why.
    const started = Date.now();
    const res = await gw.call('modern.call', {}, { key: AGENT });
    expect(Date.now() - started).toBeLessThan(1500);
    expect(res.statusCode).toBe(503);
    expect(res.json<{ error: { message: string } }>().error.message).toContain('no common protocol version');

    // A server that answers initialize with a revision the SDK refuses is the same case.
    const answered = await server('modern-answer');
    expect(answered.state).toBe('failed');
    expect(answered.lastError).toContain("Server's protocol version is not supported: 2026-07-28");
    expect(answered.restarts).toBeLessThanOrEqual(1);
  });

  it('a working server: up, its protocol version and tools, no error', async () => {
    await waitFor('everything', (s) => s.state === 'up' && s.tools > 0, 'up with tools');
    const e = await server('everything');
    expect(SUPPORTED_PROTOCOL_VERSIONS).toContain(e.protocolVersion);
    expect(e).toMatchObject({ transport: 'stdio', restarts: 0, lastError: null, nextRetryAt: null });
    expect((await view()).map((s) => s.name).sort()).toEqual(['crash', 'everything', 'modern', 'modern-answer', 'typo', 'web']);
  });

  it('needs the admin role, in the one error shape', async () => {
    const agent = await gw.app.inject({ method: 'GET', url: '/admin/mcp', headers: { authorization: `Bearer ${AGENT}` } });
    expect(agent.statusCode).toBe(403);
    expect(agent.json()).toMatchObject({ error: { code: 'FORBIDDEN', retryable: false } });
    expect(agent.body).not.toContain('nodee');
    const anonymous = await gw.app.inject({ method: 'GET', url: '/admin/mcp' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json<{ error: { code: string } }>().error.code).toBe('UNAUTHENTICATED');
  });
});

describe('toolgate check --connect: each server started once, bounded', () => {
  it('names why a server cannot connect (an error, exit 1) and shows the one that can', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-check-connect-'));
    const write = (name: string, value: unknown) => writeFileSync(join(dir, name), stringify(value));
    write('typo.yaml', { kind: 'mcp-server', name: 'typo', transport: 'stdio', command: 'nodee', args: ['server.js'] });
    write('crash.yaml', { kind: 'mcp-server', name: 'crash', transport: 'stdio', command: node, args: [fixture('crash-server.mjs')], env: { FIXTURE_TOKEN: '${env:FIXTURE_TOKEN}' } });
    write('everything.yaml', { kind: 'mcp-server', name: 'everything', transport: 'stdio', command: node, args: [EVERYTHING, 'stdio'] });
    const started = Date.now();
    const report = await runCheck({ toolsDir: dir, env: { FIXTURE_TOKEN: TOKEN }, connectTimeoutMs: 5000 });
    expect(Date.now() - started).toBeLessThan(8000);
    expect(report.ok).toBe(false);
    const typo = report.errors.find((e) => e.file.endsWith('typo.yaml'));
    expect(typo?.message).toContain("MCP server 'typo' cannot connect: spawn nodee ENOENT");
    const crash = report.errors.find((e) => e.file.endsWith('crash.yaml'));
    expect(crash?.message).toContain('exited with code 3');
    expect(crash?.message).toContain('token=[REDACTED]');
    expect(JSON.stringify(report)).not.toContain(TOKEN);
    const everything = report.mcpServers.find((s) => s.name === 'everything');
    expect(everything?.connect).toMatchObject({ ok: true, protocolVersion: expect.any(String) });
    expect(everything?.connect?.ok && everything.connect.tools).toBeGreaterThan(0);
    expect(formatReport(report)).toMatch(/everything +stdio .*up \(2025-\d\d-\d\d, \d+ tools\)/);
    expect(report.errors).toHaveLength(2);
  }, 15000);

  it('parses --connect and --connect=MS, and refuses a bad time', () => {
    expect(parseArgs(['check', '--connect']).connectTimeoutMs).toBe(10000);
    expect(parseArgs(['--connect=2500']).connectTimeoutMs).toBe(2500);
    expect(parseArgs([]).connectTimeoutMs).toBeUndefined();
    for (const bad of ['--connect=0', '--connect=abc', '--connect=1e9', '--connect=']) expect(() => parseArgs([bad])).toThrow(UsageError);
  });
});
