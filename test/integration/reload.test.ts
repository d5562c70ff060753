import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeSync, existsSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { stringify } from 'yaml';
import { echoTool, httpTool, startGateway, type TestGateway } from '../helpers/app.js';
import { Upstream, json } from '../helpers/upstream.js';
import { parseExposition, sampleValue } from '../helpers/metrics.js';
import { until } from '../helpers/wait.js';
import type { ReloadResult } from '../../src/gateway.js';

/** Hot reload of tools.d by the watcher: real files written in a temp tools.d, the API observed throughout. */
describe('hot reload of tools.d', () => {
  let gw: TestGateway;
  let up: Upstream;
  const held: ServerResponse[] = [];
  let onHeld: (() => void) | undefined;
  const version = (n: number | string) => echoTool('a.one', { result: { text: `v${n} {{message}}` } });

  // A stream of calls to a tool that stays valid through every change below: none may fail.
  const failures: string[] = [];
  let steadyCalls = 0;
  let streaming = true;
  let stream: Promise<void>[] = [];

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((_req, res) => {
      held.push(res);
      onHeld?.();
    });
    gw = await startGateway({
      watch: true,
      tools: {
        'steady.yaml': echoTool('steady.echo', { result: { text: 'steady {{message}}' } }),
        'a.yaml': version(1),
        'held.yaml': httpTool('held.http', `${up.url}/hold`, { result: { text: 'old {{ok}}' } }),
      },
    });
    const loop = async (id: number) => {
      for (let i = 0; streaming; i++) {
        const res = await gw.call('steady.echo', { message: `${id}-${i}` });
        steadyCalls++;
        const text = res.statusCode === 200 ? (res.json().result.content[0].text as string) : '';
        if (text !== `steady ${id}-${i}`) failures.push(`${res.statusCode} ${res.body}`);
      }
    };
    stream = [loop(1), loop(2)];
  });

  afterAll(async () => {
    streaming = false;
    await Promise.all(stream);
    for (const res of held) res.destroy();
    await gw?.close();
    await up?.close();
  });

  /** Resolves once `cond` holds, checked now and after every reload (bounded: 5 s). */
  function reloadedTo(cond: () => boolean, what: string): Promise<void> {
    const g = gw.app.gw;
    if (cond()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        g.off('reload', check);
        reject(new Error(`no reload reached: ${what}`));
      }, 5000);
      function check() {
        if (!cond()) return;
        clearTimeout(timer);
        g.off('reload', check);
        resolve();
      }
      g.on('reload', check);
    });
  }
  const text = async (tool: string) => {
    const res = await gw.call(tool, { message: 'hi' });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().result.content[0].text as string;
  };
  const hashOf = (tool: string) => gw.app.gw.registry.get(tool)?.source.hash;
  const errorsFor = (file: string) => (gw.app.gw.lastReload?.errors ?? []).filter((e) => e.file.endsWith(file));

  it('adds a tool written into tools.d', async () => {
    gw.writeTool('b.yaml', echoTool('b.two'));
    await reloadedTo(() => gw.app.gw.registry.get('b.two') !== undefined, 'b.two added');
    expect((await gw.call('b.two', { message: 'x' })).statusCode).toBe(200);
    expect(gw.app.gw.lastReload?.added).toContain('b.two');
  });

  it('serves a changed tool', async () => {
    const before = hashOf('a.one');
    gw.writeTool('a.yaml', version(2));
    await reloadedTo(() => hashOf('a.one') !== before, 'a.one changed');
    expect(await text('a.one')).toBe('v2 hi');
  });

  it('keeps the last good version of a file that breaks, and reports the error everywhere', async () => {
    gw.writeTool('a.yaml', 'name: a.one\ndescription: [unclosed\n');
    await reloadedTo(() => errorsFor('a.yaml').length > 0, 'a.yaml reported broken');
    expect(await text('a.one')).toBe('v2 hi');

    const shown = await gw.app.inject({ method: 'GET', url: '/admin/reload' });
    expect(shown.statusCode).toBe(200);
    const err = (shown.json().errors as { file: string; path: string; message: string; line?: number }[]).find((e) => e.file.endsWith('a.yaml'));
    expect(err).toMatchObject({ file: join(gw.toolsDir, 'a.yaml'), path: expect.any(String), message: expect.any(String) });
    expect(err?.line).toBeGreaterThan(0);

    const metrics = parseExposition((await gw.app.inject({ method: 'GET', url: '/metrics' })).body);
    expect(sampleValue(metrics, 'toolgate_reloads_total', { result: 'error' })).toBeGreaterThanOrEqual(1);

    // Read the file as the sink's timer writes it: flush() would wait on the call stream's records too.
    const auditedError = () =>
      existsSync(gw.auditFile) &&
      readFileSync(gw.auditFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .some((r) => r['event'] === 'reload' && (r['errors'] as { file: string }[]).some((e) => e.file.endsWith('a.yaml')));
    await until(auditedError, 'a reload audit record with the a.yaml error');
  });

  it('a schema error names the JSON path, and the fix is picked up', async () => {
    gw.writeTool('a.yaml', { ...version(3), sideEffect: 'sometimes' });
    await reloadedTo(() => errorsFor('a.yaml').some((e) => e.path === '/sideEffect'), 'a.yaml schema error');
    expect(await text('a.one')).toBe('v2 hi');

    gw.writeTool('a.yaml', version(3));
    await reloadedTo(() => errorsFor('a.yaml').length === 0 && gw.app.gw.lastReload?.changed.includes('a.one') === true, 'a.yaml fixed');
    expect(await text('a.one')).toBe('v3 hi');
  });

  it('removes the tool of a deleted file', async () => {
    unlinkSync(join(gw.toolsDir, 'b.yaml'));
    await reloadedTo(() => gw.app.gw.registry.get('b.two') === undefined, 'b.two removed');
    const res = await gw.call('b.two', { message: 'x' });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('TOOL_NOT_FOUND');
    expect(gw.app.gw.lastReload?.removed).toContain('b.two');
  });

  it('follows an editor that writes a temp file and renames it over the real one', async () => {
    const before = hashOf('a.one');
    const tmp = join(gw.toolsDir, 'a.yaml.tmp');
    writeFileSync(tmp, stringify(version(4)));
    renameSync(tmp, join(gw.toolsDir, 'a.yaml'));
    await reloadedTo(() => hashOf('a.one') !== before, 'a.one renamed over');
    expect(await text('a.one')).toBe('v4 hi');
  });

  it('settles a file that was half-written when its event fired', async () => {
    const full = stringify(version(5));
    const cut = full.indexOf('description:') + 'description: ec'.length;
    const fd = openSync(join(gw.toolsDir, 'a.yaml'), 'w');
    writeSync(fd, full.slice(0, cut));
    await reloadedTo(() => errorsFor('a.yaml').length > 0, 'half a.yaml reported');
    expect(await text('a.one')).toBe('v4 hi'); // the last good version serves meanwhile
    writeSync(fd, full.slice(cut));
    closeSync(fd);
    await reloadedTo(() => errorsFor('a.yaml').length === 0 && hashOf('a.one') !== undefined && gw.app.gw.lastReload?.changed.includes('a.one') === true, 'a.yaml completed');
    expect(await text('a.one')).toBe('v5 hi');
  });

  it('loads 200 files written at once, in a few reloads rather than 200', async () => {
    let reloads = 0;
    const count = () => reloads++;
    gw.app.gw.on('reload', count);
    for (let i = 0; i < 200; i++) gw.writeTool(`bulk-${String(i).padStart(3, '0')}.yaml`, echoTool(`bulk.t${i}`));
    await reloadedTo(() => Array.from({ length: 200 }, (_, i) => gw.app.gw.registry.get(`bulk.t${i}`)).every(Boolean), 'all 200 loaded');
    gw.app.gw.off('reload', count);
    expect(reloads).toBeGreaterThanOrEqual(1);
    expect(reloads).toBeLessThan(10);
    expect(gw.app.gw.lastReload?.errors).toEqual([]);
    for (const i of [0, 99, 199]) expect((await gw.call(`bulk.t${i}`, { message: 'x' })).statusCode).toBe(200);
  });

  it('lets an in-flight call finish on the definition it started with', async () => {
    const arrived = new Promise<void>((resolve) => (onHeld = resolve));
    const call = gw.call('held.http', {});
    await arrived;
    const before = hashOf('held.http');
    gw.writeTool('held.yaml', httpTool('held.http', `${up.url}/hold`, { result: { text: 'new {{ok}}' } }));
    await reloadedTo(() => hashOf('held.http') !== before, 'held.http changed');
    json(held.shift() as ServerResponse, 200, { ok: 'yes' });
    const res = await call;
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().result.content[0].text).toBe('old yes');
    // A call started now sees the new definition.
    const next = gw.call('held.http', {});
    await new Promise<void>((resolve) => (held.length > 0 ? resolve() : (onHeld = resolve)));
    json(held.shift() as ServerResponse, 200, { ok: 'yes' });
    expect((await next).json().result.content[0].text).toBe('new yes');
  });

  it('served every call to the tool that stayed valid', async () => {
    streaming = false;
    await Promise.all(stream);
    expect(steadyCalls).toBeGreaterThan(20);
    expect(failures).toEqual([]);
  });

  it('POST /admin/reload forces a reload even with nothing changed', async () => {
    const before = gw.app.gw.registry.generation;
    const res = await gw.app.inject({ method: 'POST', url: '/admin/reload' });
    expect(res.statusCode).toBe(200);
    const body = res.json() as ReloadResult;
    expect(body.generation).toBeGreaterThan(before);
    expect(body).toMatchObject({ added: [], changed: [], removed: [], errors: [] });
  });
});
