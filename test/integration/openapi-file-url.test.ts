import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { rmSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { Upstream, json } from '../helpers/upstream.js';
import type { ReloadResult } from '../../src/gateway.js';

/** kind: openapi with url: the document fetched from a real server on 127.0.0.1 (headers, cache, refetch, bounds). */

const statusOp = (summary: string) => ({ get: { operationId: 'status', summary, responses: { '200': { description: 'ok' } } } });
const document = (paths: Record<string, unknown>) => JSON.stringify({ openapi: '3.0.3', info: { title: 'remote', version: '1' }, paths });

describe('kind: openapi with url:', () => {
  let gw: TestGateway;
  let docs: Upstream;
  let api: Upstream;
  let text = '';
  let mode: 'doc' | 'html' | 'html-as-text' | 'stall' | 'redirect-away' | 'redirect-here' | '401' = 'doc';
  const stalled: ServerResponse[] = [];
  const file = () => join(gw.toolsDir, 'remote.yaml');
  const reload = async (): Promise<ReloadResult> => gw.app.gw.reload();
  const names = () => gw.app.gw.registry.tools.map((t) => t.name);
  const docRequests = () => docs.seen.filter((r) => r.url.startsWith('/openapi'));
  const writeFile = (extra: Record<string, unknown> = {}) =>
    gw.writeTool('remote.yaml', { kind: 'openapi', name: 'remote', url: `${docs.url}/openapi.json`, headers: { authorization: 'Bearer ${env:DOCS_TOKEN}' }, baseUrl: api.url, ...extra });

  beforeAll(async () => {
    api = await new Upstream().start();
    api.on((req, res) => json(res, 200, { url: req.url }));
    docs = await new Upstream().start();
    docs.on((req, res) => {
      if (req.url === '/moved') return json(res, 200, {});
      if (mode === 'stall') return void stalled.push(res);
      if (mode === '401') return json(res, 401, { error: 'no' });
      if (mode === 'html') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Sign in</title>');
      if (mode === 'html-as-text') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('<html><body>Sign in</body></html>');
      if (mode === 'redirect-away') return void res.writeHead(302, { location: `${api.url}/openapi.json` }).end();
      if (mode === 'redirect-here' && req.url === '/openapi.json') return void res.writeHead(301, { location: '/openapi/v2.json' }).end();
      const etag = `"${createHash('sha256').update(text).digest('hex').slice(0, 16)}"`;
      if (req.headers['if-none-match'] === etag) return void res.writeHead(304, { etag }).end();
      res.writeHead(200, { 'content-type': 'application/json', etag }).end(text);
    });
    gw = await startGateway({ env: { DOCS_TOKEN: 'docs-token-0123456789' } });
  });
  afterAll(async () => {
    for (const r of stalled) r.destroy();
    await gw?.close();
    await docs?.close();
    await api?.close();
  });
  beforeEach(async () => {
    mode = 'doc';
    text = document({ '/status': statusOp('Service status') });
    rmSync(gw.toolsDir, { recursive: true, force: true });
    mkdirSync(gw.toolsDir);
    await reload(); // the file gone: its pins and cached copy go too
    writeFile();
    expect((await reload()).errors).toEqual([]);
  });

  it('fetches the document with the file\u2019s headers (their ${env:} values are secrets), and its operations serve', async () => {
    expect(names()).toEqual(['remote.status']);
    expect(docRequests().at(-1)?.headers['authorization']).toBe('Bearer docs-token-0123456789');
    expect(gw.app.gw.secrets.has('docs-token-0123456789')).toBe(true);
    const res = await gw.call('remote.status', {});
    expect(res.statusCode).toBe(200);
    expect(res.json().result.structuredContent).toEqual({ url: '/status' });
  });

  it('refetched on reload: unchanged answers 304 (the cached copy, nothing re-parsed), a changed one re-imports in place', async () => {
    const before = gw.app.gw.registry.get('remote.status');
    await new Promise((r) => setTimeout(r, 1100)); // past the burst window in which a reload reuses the copy
    const n = docRequests().length;
    expect((await reload()).errors).toEqual([]);
    expect(docRequests()).toHaveLength(n + 1);
    expect(docRequests().at(-1)?.headers['if-none-match']).toBeDefined();
    expect(gw.app.gw.registry.get('remote.status')).toBe(before); // the same compiled tool: no re-parse, no recompile
    text = document({ '/status': statusOp('Service status'), '/version': { get: { operationId: 'version', responses: { '200': { description: 'ok' } } } } });
    await new Promise((r) => setTimeout(r, 1100));
    const r = await reload();
    expect(r.errors).toEqual([]);
    expect(r.added).toEqual(['remote.version']);
    expect(gw.app.gw.registry.get('remote.status')).toBe(before); // an unchanged operation keeps its compiled tool
  });

  it.each([
    ['html', /HTML page/],
    ['html-as-text', /HTML page/],
    ['401', /HTTP 401/],
    ['redirect-away', /another origin/],
  ] as const)('a document server answering %s: a problem at /url, the last good tools serve on', async (m, message) => {
    mode = m;
    await new Promise((r) => setTimeout(r, 1100));
    const r = await reload();
    expect(r.errors).toEqual([{ file: file(), line: expect.any(Number), path: '/url', message: expect.stringMatching(message) }]);
    expect(names()).toEqual(['remote.status']);
    expect((await gw.call('remote.status', {})).statusCode).toBe(200);
    if (m === 'redirect-away') expect(api.seen.filter((s) => s.url === '/openapi.json')).toEqual([]); // the headers never went there
  });

  it('a same-origin redirect is followed', async () => {
    mode = 'redirect-here';
    text = document({ '/status': statusOp('Service status'), '/moved': { get: { operationId: 'moved', responses: { '200': { description: 'ok' } } } } });
    await new Promise((r) => setTimeout(r, 1100));
    expect((await reload()).errors).toEqual([]);
    expect(names()).toEqual(['remote.moved', 'remote.status']);
    expect(docs.seen.at(-1)).toMatchObject({ url: '/openapi/v2.json', headers: expect.objectContaining({ authorization: 'Bearer docs-token-0123456789' }) });
  });

  it('a document server that never answers: a problem within fetchTimeoutMs, the reload is not stuck', async () => {
    writeFile({ fetchTimeoutMs: 300 });
    mode = 'stall';
    const started = Date.now();
    const r = await reload();
    expect(Date.now() - started).toBeLessThan(3000);
    expect(r.errors).toEqual([{ file: file(), line: expect.any(Number), path: '/url', message: expect.stringContaining('no complete answer within 300 ms') }]);
    expect(names()).toEqual(['remote.status']);
  });

  it('headers are never sent over plain http to a host that is not loopback', async () => {
    gw.writeTool('far.yaml', { kind: 'openapi', name: 'far', url: 'http://docs.example.invalid/openapi.json', headers: { 'x-api-key': 'k' } });
    const r = await reload();
    expect(r.errors).toEqual([{ file: join(gw.toolsDir, 'far.yaml'), line: expect.any(Number), path: '/url', message: expect.stringContaining('only over https') }]);
  });

  it('refreshSeconds: a document changed on its server reloads the gateway by itself', { timeout: 20_000 }, async () => {
    writeFile({ refreshSeconds: 10 });
    expect((await reload()).errors).toEqual([]);
    const generation = gw.app.gw.registry.generation;
    text = document({ '/status': statusOp('Service status'), '/later': { get: { operationId: 'later', responses: { '200': { description: 'ok' } } } } });
    const until = Date.now() + 15_000;
    while (!names().includes('remote.later') && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    expect(names()).toContain('remote.later');
    expect(gw.app.gw.registry.generation).toBeGreaterThan(generation);
  });
});
