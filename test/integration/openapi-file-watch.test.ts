import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { Upstream, json } from '../helpers/upstream.js';

/** kind: openapi under the real watcher: a document in a subfolder of tools.d is watched like a tool file. */

const op = (id: string, summary = id) => ({ get: { operationId: id, summary, responses: { '200': { description: 'ok' } } } });
const doc = (paths: Record<string, unknown>) => stringify({ openapi: '3.1.0', info: { title: 't', version: '1' }, paths });

/** Resolves once `cond` holds, checked after every reload (bounded: 5 s). */
function reloadedTo(gw: TestGateway, cond: () => boolean, what: string): Promise<void> {
  if (cond()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      gw.app.gw.off('reload', check);
      reject(new Error(`${what}: not reached (last errors ${JSON.stringify(gw.app.gw.lastReload?.errors)})`));
    }, 5000);
    const check = () => {
      if (!cond()) return;
      clearTimeout(timer);
      gw.app.gw.off('reload', check);
      resolve();
    };
    gw.app.gw.on('reload', check);
  });
}

describe('kind: openapi documents under the watcher', () => {
  let gw: TestGateway;
  let up: Upstream;
  const specs = () => join(gw.toolsDir, 'specs');
  const spec = () => join(specs(), 'svc.yaml');
  const names = () => gw.app.gw.registry.tools.map((t) => t.name);
  // Written like an editor: to a temp name, then renamed over the document.
  const save = (path: string, text: string) => {
    writeFileSync(`${path}.tmp~`, text);
    renameSync(`${path}.tmp~`, path);
  };

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((req, res) => json(res, 200, { url: req.url }));
    gw = await startGateway({ watch: true });
  });
  afterAll(async () => {
    await gw?.close();
    await up?.close();
  });

  it('a file whose document (in a subfolder not there yet) appears later: loaded once the document is written', async () => {
    gw.writeTool('svc.yaml', { kind: 'openapi', name: 'svc', spec: 'specs/svc.yaml', baseUrl: up.url });
    await reloadedTo(gw, () => (gw.app.gw.lastReload?.errors ?? []).some((e) => e.path === '/spec'), 'missing document reported');
    mkdirSync(specs());
    save(spec(), doc({ '/a': op('a') }));
    await reloadedTo(gw, () => names().includes('svc.a'), 'svc.a served');
    expect(gw.app.gw.lastReload?.errors).toEqual([]);
  });

  it('editing the document re-imports in place; a half-written (broken) one keeps the last good tools serving', async () => {
    save(spec(), doc({ '/a': op('a'), '/b': op('b') }));
    await reloadedTo(gw, () => names().includes('svc.b'), 'svc.b added');
    writeFileSync(spec(), 'openapi: 3.1.0\npaths:\n  /a: {get: [\n');
    await reloadedTo(gw, () => (gw.app.gw.lastReload?.errors ?? []).some((e) => e.file === spec()), 'broken document reported');
    expect(names()).toEqual(['svc.a', 'svc.b']);
    expect((await gw.call('svc.b', {})).statusCode).toBe(200);
    save(spec(), doc({ '/a': op('a'), '/b': op('b'), '/c': op('c') }));
    await reloadedTo(gw, () => names().includes('svc.c'), 'mended');
    expect(gw.app.gw.lastReload?.errors).toEqual([]);
  });

  it('a deleted document: reported, the last good tools serve on', async () => {
    rmSync(spec());
    await reloadedTo(gw, () => (gw.app.gw.lastReload?.errors ?? []).some((e) => e.path === '/spec' && e.message.includes('does not exist')), 'deletion reported');
    expect(names()).toEqual(['svc.a', 'svc.b', 'svc.c']);
    expect((await gw.call('svc.a', {})).statusCode).toBe(200);
  });
});
