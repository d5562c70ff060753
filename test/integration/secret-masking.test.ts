import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lineSink } from '../helpers/log-lines.js';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/logger.js';
import { Upstream } from '../helpers/upstream.js';

/**
 * Secrets (values from `${env:…}`) never reach a client, the audit log or the logs: not whole,
 * not as a prefix left by a cut, not base64- or URL-encoded. The upstream echoes the
 * Authorization header it was sent, in the form and at the offset the test asks for.
 */
describe('secret masking before cuts, in every encoding', () => {
  // Characters every encoding changes: '/', '+', ' ', '=', '&'.
  const SECRET = 'Zq7/xK9+mW v2Lp4=RtY8&nBc';
  const KEY = 'agent-key-secret-masking-1';
  const FORMS: Record<string, (s: string) => string> = {
    raw: (s) => s,
    base64: (s) => Buffer.from(s).toString('base64'),
    base64url: (s) => Buffer.from(s).toString('base64url'),
    uri: encodeURIComponent,
    form: (s) => new URLSearchParams([['k', s]]).toString().slice(2),
    // How other stacks write it: Go's encoding/json (& as \u0026), PHP's json_encode (/ as \/), mixed hex case.
    gojson: (s) => JSON.stringify(s).slice(1, -1).replace(/&/g, '\\u0026'),
    phpjson: (s) => JSON.stringify(s).slice(1, -1).replace(/\//g, '\\/'),
    mixedhex: (s) => encodeURIComponent(s).replace(/%2F|%3D/g, (x) => x.toLowerCase()),
  };
  const lines: string[] = [];
  let app: FastifyInstance;
  let up: Upstream;
  let auditFile: string;

  /** What of the secret shows in `text`: prefixes of 4+ characters of it, prefixes of 6+ of its encoded forms. */
  function leaks(text: string): string[] {
    const found: string[] = [];
    for (let n = 4; n <= SECRET.length; n++) if (text.includes(SECRET.slice(0, n))) found.push(SECRET.slice(0, n));
    for (const [name, encode] of Object.entries(FORMS)) {
      const f = encode(SECRET);
      for (let n = 6; n <= f.length; n++) if (f !== SECRET && text.includes(f.slice(0, n))) found.push(`${name}:${f.slice(0, n)}`);
    }
    return found;
  }

  const call = (tool: string, args: Record<string, unknown>) =>
    app.inject({ method: 'POST', url: `/v1/tools/${tool}/call`, headers: { authorization: `Bearer ${KEY}` }, payload: { arguments: args } });

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      const form = url.searchParams.get('form') ?? 'raw';
      const echoed = form === 'basic' ? `Basic ${Buffer.from(`user:${token}`).toString('base64')}` : (FORMS[form] as (s: string) => string)(token);
      const text = 'x'.repeat(Number(url.searchParams.get('pad') ?? 0)) + echoed + ' and the rest of the page'.repeat(80);
      if (url.pathname === '/ok') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ text }));
      }
      res.writeHead(Number(url.searchParams.get('status') ?? 500), { 'content-type': 'text/plain' });
      res.end(text);
    });
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-masking-'));
    const toolsDir = join(dir, 'tools.d');
    mkdirSync(toolsDir);
    auditFile = join(dir, 'audit.jsonl');
    const args = { type: 'object', properties: { status: { type: 'integer' }, pad: { type: 'integer' }, form: { type: 'string' }, note: { type: 'string' } } };
    const headers = { authorization: 'Bearer ${env:UP_SECRET}' };
    const write = (file: string, v: unknown) => writeFileSync(join(toolsDir, file), stringify(v));
    write('error.yaml', {
      name: 'echo.error', description: 'Echoes its key in an error.', sideEffect: 'read', inputSchema: args, breaker: { failureThreshold: 1000 }, retry: { attempts: 1 },
      backends: [{ id: 'up', http: { url: `${up.url}/error?status={{status}}&pad={{pad}}&form={{form}}`, headers } }],
    });
    write('ok.yaml', {
      name: 'echo.ok', description: 'Echoes its key in a result.', sideEffect: 'read', inputSchema: args, result: { maxBytes: 300 },
      backends: [{ id: 'up', http: { url: `${up.url}/ok?pad={{pad}}&form={{form}}`, headers } }],
    });
    write('leaky.yaml', {
      kind: 'mcp-server', name: 'leaky', transport: 'stdio', command: process.execPath, prestart: true,
      args: [join(import.meta.dirname, '../fixtures/mcp/leaky-server.mjs')], env: { LEAKY_SECRET: '${env:UP_SECRET}' },
    });
    const file = join(dir, 'gateway.yaml');
    writeFileSync(file, stringify({ auth: { keys: [{ id: 'agent-1', key: '${env:AGENT_KEY}' }] }, audit: { file: auditFile }, tools: { dir: toolsDir, watch: false } }));
    const env = { AGENT_KEY: KEY, UP_SECRET: SECRET };
    const loaded = loadConfig({ file, env });
    const sink = lineSink(lines);
    app = await buildApp({ loaded, env, logger: createLogger('info', loaded.secrets, sink) });
    await app.gw.mcp.settled();
  }, 30_000);
  afterAll(async () => {
    await app?.close();
    await up?.close();
  });

  it('an error body with the secret straddling the 1 KiB cut keeps no prefix of it, at every offset across it', async () => {
    for (let start = 1024 - SECRET.length; start <= 1024; start += 3) {
      const res = await call('echo.error', { status: 500, pad: start, form: 'raw' });
      expect(res.statusCode).toBe(502);
      const body = res.json().error.details[0].body as string;
      expect(body.startsWith('x'.repeat(Math.min(start, 1000)))).toBe(true);
      expect(body.endsWith('…')).toBe(true);
      expect(leaks(res.body)).toEqual([]);
    }
  });

  it.each(['base64', 'base64url', 'uri', 'form', 'basic', 'gojson', 'phpjson', 'mixedhex'])('masks the %s form of the secret in a 4xx body, also across the cut', async (form) => {
    for (const [status, pad] of [[400, 10], [404, 1010], [500, 1020]] as const) {
      const res = await call('echo.error', { status, pad, form });
      expect(res.statusCode).toBe(502);
      expect(leaks(res.body)).toEqual([]);
      if (pad < 1000) expect(res.json().error.details[0].body).toContain('[REDACTED]');
    }
    if (form === 'basic') {
      const res = await call('echo.error', { status: 422, pad: 0, form });
      const body = res.json().error.details[0].body as string;
      expect(body).toMatch(/^Basic dXNlcjpa?\[REDACTED\]/); // what is left: base64 of "user:" (and at most 2 characters)
    }
  });

  it('masks the secret in a result before result.maxBytes cuts it, and in the full text kept for paging', async () => {
    for (const form of ['raw', 'base64', 'uri']) {
      for (const pad of [0, 270, 280]) {
        const res = await call('echo.ok', { pad, form });
        expect(res.statusCode).toBe(200);
        expect(leaks(res.body)).toEqual([]);
        const more = res.json().more as { href: string } | undefined;
        expect(more).toBeDefined();
        const page = await app.inject({ method: 'GET', url: (more as { href: string }).href.replace(/offset=\d+/, 'offset=0'), headers: { authorization: `Bearer ${KEY}` } });
        expect(page.statusCode).toBe(200);
        expect(page.json().text).toContain('[REDACTED]');
        expect(leaks(page.body)).toEqual([]);
      }
    }
  });

  it('an MCP tool error quoting the secret where its 1,000- and 4,096-byte cuts fall keeps no prefix of it; an MCP result is masked too', async () => {
    for (const pad of [990, 4085]) {
      const res = await call('leaky.fail', { pad });
      expect(res.statusCode).toBe(502);
      expect(leaks(res.body)).toEqual([]);
    }
    const ok = await call('leaky.leak', { pad: 3 });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().result.content[0].text).toBe(`xxx[REDACTED] and [REDACTED] end`);
  });

  it('keeps every form out of the audit log (arguments a model echoed included) and out of the logs', async () => {
    for (const encode of Object.values(FORMS)) {
      const res = await call('echo.error', { status: 500, pad: 1015, form: 'raw', note: `the key is ${encode(SECRET)}` });
      expect(res.statusCode).toBe(502);
    }
    app.log.info({ echoed: Object.values(FORMS).map((f) => f(SECRET)), err: new Error(`upstream said ${encodeURIComponent(SECRET)}`) }, `careless ${Buffer.from(SECRET).toString('base64')}`);
    await app.gw.audit.flush();
    const audit = readFileSync(auditFile, 'utf8');
    expect(audit).toContain('the key is [REDACTED]');
    expect(leaks(audit)).toEqual([]);
    const log = lines.join('\n');
    expect(log).toContain('careless [REDACTED]');
    expect(leaks(log)).toEqual([]);
  });
});
