import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { json, Upstream } from '../helpers/upstream.js';

// Red team: hostile OpenAPI documents and files in tools.d (a real gateway, real listening servers
// that count what they are asked). Each is a problem of its file; the good file keeps serving.

const PASSWORD = 'docPassw0rd-zq81';
const info = { title: 't', version: '1' };
const op = (id: string) => ({ get: { operationId: id, responses: { '200': { description: 'ok' } } } });

interface Reload { errors: { file: string; path: string; message: string }[] }

describe('red team: hostile OpenAPI documents', () => {
  let gw: TestGateway;
  let up: Upstream;
  let other: Upstream;
  let reload: Reload;
  let reloadMs = 0;
  const problem = (file: string) => reload.errors.filter((e) => e.file.endsWith(`/${file}`)).map((e) => e.message);

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((req, res) => {
      if (req.url === '/to-file') {
        res.writeHead(302, { location: 'file:///etc/passwd' });
        return void res.end();
      }
      if (req.url === '/to-other') {
        res.writeHead(302, { location: `${other.url}/doc.json` });
        return void res.end();
      }
      json(res, 200, { ok: true });
    });
    other = await new Upstream().start(); // must never be asked anything
    other.on((_req, res) => json(res, 200, { openapi: '3.1.0', info, paths: { '/x': op('x') } }));
    const port = new URL(up.url).port;
    gw = await startGateway();
    const specs = join(gw.toolsDir, 'specs');
    mkdirSync(specs);
    const write = (name: string, text: string) => writeFileSync(join(specs, name), text);
    write('good.yaml', stringify({ openapi: '3.1.0', info, paths: { '/ok': op('ok') } }));
    write('userinfo.yaml', stringify({ openapi: '3.1.0', info, servers: [{ url: `http://admin:${PASSWORD}@127.0.0.1:${port}/v1` }], paths: { '/x': op('x') } }));
    let bomb = 'a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n';
    for (let i = 1; i < 12; i++) bomb += `a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]\n`;
    write('bomb.yaml', `openapi: 3.1.0\ninfo: {title: t, version: "1"}\npaths: {}\n${bomb}`);
    const deep = '{"type":"object","properties":{"a":'.repeat(10_000) + '{"type":"string"}' + '}}'.repeat(10_000);
    write('deep.json', `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/d":{"post":{"operationId":"d","requestBody":{"content":{"application/json":{"schema":${deep}}}},"responses":{"200":{"description":"ok"}}}}}}`);
    write('refs.yaml', stringify({ openapi: '3.1.0', info, paths: {
      '/remote': { get: { operationId: 'remote', parameters: [{ $ref: `${other.url}/param.json` }], responses: { '200': { description: 'ok' } } } },
      '/file': { get: { operationId: 'file', parameters: [{ $ref: 'file:///etc/passwd#/x' }], responses: { '200': { description: 'ok' } } } },
      '/local': op('local'),
    } }));
    symlinkSync('/etc', join(specs, 'etc'));
    const file = (name: string, spec: Record<string, unknown>) => gw.writeTool(`${name}.yaml`, { kind: 'openapi', name, ...spec });
    file('good', { spec: './specs/good.yaml', baseUrl: up.url });
    file('userinfo', { spec: './specs/userinfo.yaml' });
    file('bomb', { spec: './specs/bomb.yaml', baseUrl: up.url });
    file('deep', { spec: './specs/deep.json', baseUrl: up.url });
    file('refs', { spec: './specs/refs.yaml', baseUrl: up.url });
    file('symlinked', { spec: './specs/etc/hostname', baseUrl: up.url });
    file('climbing', { spec: '../../../../../etc/hostname', baseUrl: up.url });
    file('tofile', { url: `${up.url}/to-file`, baseUrl: up.url });
    file('toother', { url: `${up.url}/to-other`, baseUrl: up.url, headers: { authorization: 'Bearer doc-token-0123456789' } });
    const t0 = performance.now();
    reload = (await gw.app.inject({ method: 'POST', url: '/admin/reload' })).json() as Reload;
    reloadMs = performance.now() - t0;
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    await up?.close();
    await other?.close();
  });

  it('the good file serves, whatever the others hold, and the reload stays quick', async () => {
    expect((await gw.call('good.ok', {})).statusCode).toBe(200);
    expect(reloadMs).toBeLessThan(10_000);
  });

  it("a server URL with a password: a problem that never quotes the password (reload answer, audit, /admin/openapi)", async () => {
    const all = reload.errors.filter((e) => e.file.endsWith('userinfo.yaml'));
    expect(all.map((e) => e.message)).toEqual([expect.stringContaining('may not carry credentials')]);
    expect(JSON.stringify(reload)).not.toContain(PASSWORD);
    expect(JSON.stringify(await gw.audit())).not.toContain(PASSWORD);
    expect((await gw.app.inject({ url: '/admin/openapi' })).body).not.toContain(PASSWORD);
  });

  it('a YAML alias bomb and a 10,000-level schema: problems of their files, said in words, no crash', () => {
    expect(problem('bomb.yaml')).toEqual([expect.stringMatching(/alias/i)]);
    expect(problem('deep.yaml')).toEqual([expect.stringContaining('nested too deeply')]);
  });

  it('a $ref to http://127.0.0.1:… or file:///etc/passwd is never fetched: those operations are skipped, the others import', async () => {
    const names = gw.app.gw.registry.tools.map((t) => t.name);
    expect(names).toContain('refs.local');
    expect(names).not.toContain('refs.remote');
    expect(names).not.toContain('refs.file');
    expect(other.seen).toHaveLength(0);
  });

  it('spec: through a symlink or .. out of tools.d, url: redirected to file: or to another origin: problems, nothing read or asked', () => {
    expect(problem('symlinked.yaml')).toEqual([expect.stringContaining('outside the tools directory')]);
    expect(problem('climbing.yaml')).toEqual([expect.stringContaining('outside the tools directory')]);
    expect(problem('tofile.yaml')).toEqual([expect.stringContaining('redirected')]);
    expect(problem('toother.yaml')).toEqual([expect.stringContaining('redirected')]);
    expect(other.seen).toHaveLength(0);
  });
});
