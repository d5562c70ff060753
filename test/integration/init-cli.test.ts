import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { json, Upstream } from '../helpers/upstream.js';

/** `toolgate init` as a user runs it (the built bin), then a real gateway loading what it wrote. */
const CLI = resolve('dist/cli/check.js');
const V2_SERVER = resolve('test/fixtures/mcp/v2-server.mjs');

function init(args: string[], env: Record<string, string> = {}): { status: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [CLI, 'init', ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 20_000 });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

function zsh(line: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn('zsh', ['-c', line], { cwd: resolve('.'), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (status) => done({ status, stdout, stderr }));
  });
}

function newDir(): { dir: string; tools: string } {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-init-'));
  const tools = join(dir, 'tools.d');
  mkdirSync(tools);
  return { dir, tools };
}

/** Polls until the gateway serves `name` (a watched tools.d reloads; an MCP server imports its tools). */
async function served(gw: ServerProcess, name: string): Promise<Record<string, unknown>> {
  let last: Record<string, unknown> = {};
  for (let i = 0; i < 200; i++) {
    const res = await fetch(`${gw.url}/v1/tools/${name}`);
    last = (await res.json()) as Record<string, unknown>;
    if (res.ok) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name} was never served: ${JSON.stringify(last)}\n${gw.output()}`);
}

async function call(gw: ServerProcess, name: string, args: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${gw.url}/v1/tools/${name}/call`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

describe('toolgate init', () => {
  const upstream = new Upstream();
  const gateways: ServerProcess[] = [];

  beforeAll(async () => {
    await upstream.start();
    upstream.on((req, res, body) => json(res, 200, { method: req.method, url: req.url, body: body === '' ? null : JSON.parse(body) }));
  });
  afterEach(async () => {
    for (const gw of gateways.splice(0)) {
      gw.child.kill('SIGTERM');
      await gw.exited;
    }
  });
  afterAll(() => upstream.close());

  it('--from-url: a GET tool whose query parameters are arguments; a running gateway loads it, and the printed next steps work in zsh', async () => {
    const { dir, tools } = newDir();
    const gw = await startServerProcess({ dir, config: {}, tools: {} });
    gateways.push(gw);
    const port = new URL(gw.url).port;
    const r = init(['--from-url', `${upstream.url}/v1/forecast?city=Paris&units=metric`, '--name', 'weather.forecast', '--tools-dir', tools], { PORT: port });
    expect(r.err).toBe('');
    expect(r.status).toBe(0);
    // Next steps: REST with a quoted URL, and an MCP client at /mcp, on the port the gateway listens on.
    const curlLine = r.out.split('\n').find((l) => l.trim().startsWith('curl -s -X POST'));
    const mcpLine = r.out.split('\n').find((l) => l.trim().startsWith('node scripts/mcp-call.mjs'));
    expect(curlLine).toContain(`'http://127.0.0.1:${port}/v1/tools/weather.forecast/call'`);
    expect(mcpLine).toContain(`'http://127.0.0.1:${port}/mcp' 'weather.forecast'`);
    // tools.d is watched: the new file is served without a restart.
    const listed = await served(gw, 'weather.forecast');
    expect(listed).toMatchObject({ name: 'weather.forecast', sideEffect: 'read', inputSchema: { required: ['city', 'units'] } });
    for (const line of [curlLine, mcpLine]) {
      const z = await zsh(line ?? 'false'); // async: the upstream answers from this process
      expect({ status: z.status, err: z.stderr }).toEqual({ status: 0, err: '' });
      expect(z.stdout).toContain('/v1/forecast?city=Paris&units=metric'); // the upstream's echo of the example arguments
      expect(z.stdout).not.toContain('"error"');
    }
    const res = await call(gw, 'weather.forecast', { city: 'Lyon', units: 'si' });
    expect(res.status).toBe(200);
    expect(res.body['result']).toMatchObject({ structuredContent: { method: 'GET', url: '/v1/forecast?city=Lyon&units=si' } });
    // The guessed schema is enforced: a missing argument is the model's mistake, not a call.
    expect((await call(gw, 'weather.forecast', { city: 'Lyon' })).status).toBe(422);
  }, 30_000);

  it('--from-url --method POST: a write tool with a free-form body object sent as JSON', async () => {
    const { dir, tools } = newDir();
    const r = init(['--from-url', `${upstream.url}/v1/notes`, '--method', 'post', '--tools-dir', tools]);
    expect(r.status).toBe(0);
    expect(readdirSync(tools)).toEqual(['local.notes.yaml']); // name guessed from host and path
    const gw = await startServerProcess({ dir, config: {}, tools: {} });
    gateways.push(gw);
    const res = await call(gw, 'local.notes', { body: { title: 'first', tags: ['a'] } });
    expect(res.status).toBe(200);
    expect(res.body['result']).toMatchObject({ structuredContent: { method: 'POST', url: '/v1/notes', body: { title: 'first', tags: ['a'] } } });
    const listed = (await (await fetch(`${gw.url}/v1/tools/local.notes`)).json()) as Record<string, unknown>;
    expect(listed['sideEffect']).toBe('write');
  }, 30_000);

  it('--from-mcp: a kind: mcp-server file for the command line; its tool answers through the gateway', async () => {
    const { dir, tools } = newDir();
    const r = init(['--from-mcp', `node '${V2_SERVER}' --era dual`, '--tools-dir', tools]);
    expect(r.err).toBe('');
    expect(r.status).toBe(0);
    expect(readdirSync(tools)).toEqual(['v2-server.yaml']);
    expect(readFileSync(join(tools, 'v2-server.yaml'), 'utf8')).toContain('kind: mcp-server');
    const gw = await startServerProcess({ dir, config: {}, tools: {} });
    gateways.push(gw);
    await served(gw, 'v2-server.echo');
    const res = await call(gw, 'v2-server.echo', { text: 'hi there' });
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body['result'])).toContain('hi there');
  }, 30_000);

  it('a secret query value is never written: the file reads it from ${env:…}, and the gateway sends it from the environment', async () => {
    const { dir, tools } = newDir();
    const r = init(['--from-url', `${upstream.url}/v1/search?q=x&api_key=sk-live-abcdef123456`, '--name', 'search.web', '--tools-dir', tools]);
    expect(r.status).toBe(0);
    const text = readFileSync(join(tools, 'search.web.yaml'), 'utf8');
    expect(text).not.toContain('sk-live-abcdef123456');
    expect(text).toContain('api_key=${env:SEARCH_WEB_API_KEY}');
    expect(r.out).toContain('SEARCH_WEB_API_KEY');
    expect(r.out + r.err).not.toContain('sk-live-abcdef123456');
    const gw = await startServerProcess({ dir, config: {}, tools: {}, env: { SEARCH_WEB_API_KEY: 'sk-from-env-777777' } });
    gateways.push(gw);
    const seen = upstream.seen.length;
    const res = await call(gw, 'search.web', { q: 'cats' });
    expect(res.status).toBe(200);
    expect(upstream.seen[seen]?.url).toBe('/v1/search?q=cats&api_key=sk-from-env-777777');
    expect(JSON.stringify(res.body)).not.toContain('sk-from-env-777777'); // masked in what the caller sees
  }, 30_000);

  describe('hostile input: refused with the reason, nothing written', () => {
    const cases: [string, string[], RegExp][] = [
      ['not a URL', ['--from-url', 'not a url'], /not an absolute URL/],
      ['another scheme', ['--from-url', 'file:///etc/passwd'], /http\(s\) backends only/],
      ['credentials in the URL', ['--from-url', 'https://alice:hunter2@api.example.com/v1/x'], /credentials .*\$\{env:/s],
      ['a dot segment the gateway refuses at call time', ['--from-url', 'https://api.example.com/v1/../admin'], /'\.' or '\.\.' segment/],
      ['an encoded dot segment', ['--from-url', 'https://api.example.com/v1/%2e%2e/admin'], /'\.' or '\.\.' segment/],
      ['a fragment', ['--from-url', 'https://api.example.com/v1/x#top'], /fragment/],
      ['an invalid tool name', ['--from-url', 'https://api.example.com/v1/x', '--name', 'Weather Now'], /invalid tool name/],
      ['a name with an empty segment', ['--from-url', 'https://api.example.com/v1/x', '--name', 'weather..now'], /invalid tool name/],
      ['an invalid server name', ['--from-mcp', 'node server.mjs', '--name', 'My.Server'], /invalid server name/],
      ['an unclosed quote', ['--from-mcp', "node 'server.mjs"], /not a command line/],
      ['a secret on the MCP command line', ['--from-mcp', 'npx -y some-server --api-key=sk-123456'], /looks like a secret/],
    ];
    for (const [what, args, message] of cases) {
      it(what, () => {
        const { tools } = newDir();
        const r = init([...args, '--tools-dir', tools]);
        expect(r.status).toBe(1);
        expect(r.err).toMatch(message);
        expect(r.err).toContain('Nothing was written.');
        expect(r.err).not.toContain('hunter2');
        expect(r.err).not.toContain('sk-123456');
        expect(readdirSync(tools)).toEqual([]);
      });
    }

    it('an existing file is never overwritten', () => {
      const { tools } = newDir();
      const file = join(tools, 'weather.now.yaml');
      writeFileSync(file, 'mine: true\n');
      const r = init(['--from-url', 'https://api.example.com/v1/now', '--name', 'weather.now', '--tools-dir', tools]);
      expect(r.status).toBe(1);
      expect(r.err).toContain('exists: not overwritten');
      expect(readFileSync(file, 'utf8')).toBe('mine: true\n');
    });

    it('usage errors exit 2: neither or both sources, an unknown method', () => {
      const { tools } = newDir();
      for (const args of [[], ['--from-url', 'https://a.example/x', '--from-mcp', 'node s.mjs'], ['--from-url', 'https://a.example/x', '--method', 'DELETE']]) {
        const r = init([...args, '--tools-dir', tools]);
        expect(r.status).toBe(2);
        expect(r.err).toContain('usage: toolgate init');
      }
      expect(existsSync(join(tools, 'a.x.yaml'))).toBe(false);
    });
  });
});
