import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestGateway } from '../helpers/app.js';
import { listAllResources, startPassthroughGateway, type Era, type PassthroughGateway } from '../helpers/passthrough.js';
import { EVERYTHING, FILESYSTEM } from '../helpers/processes.js';
import { untilAsync } from '../helpers/wait.js';

// Resources, templates and subscriptions of real servers (server-everything, server-filesystem)
// through /mcp, with the v2 SDK client in both eras; visibility per key; hostile URIs.

const ALL = 'res-all-key-000000001';
const NARROW = 'res-narrow-key-000002';
const STATIC = 'res-static-key-000003';
const node = process.execPath;

describe('resources through /mcp', () => {
  let gw: TestGateway;
  let t: PassthroughGateway | undefined;
  const connect = (era: Era, key = ALL) => t!.clients.connect(era, key);
  const listAll = listAllResources;

  beforeAll(async () => {
    const files = mkdtempSync(join(tmpdir(), 'toolgate-res-files-'));
    writeFileSync(join(files, 'hello.txt'), 'hello');
    t = await startPassthroughGateway({
      config: {
        auth: {
          keys: [
            { id: 'all', key: ALL, roles: ['agent'] },
            { id: 'narrow', key: NARROW, roles: ['agent'], tools: ['every_thing.echo'] },
            { id: 'static', key: STATIC, roles: ['agent'], tools: ['every_thing.echo'], resources: ['toolgate://every_thing/demo://resource/static/*'] },
          ],
        },
        mcp: { resources: { maxReadBytes: 2048, maxSubscriptionsPerSession: 3 } },
      },
      tools: {
        'everything.yaml': { kind: 'mcp-server', name: 'every_thing', transport: 'stdio', command: node, args: [EVERYTHING, 'stdio'], prestart: true, resources: { exclude: ['demo://resource/static/document/extension.md'] }, overrides: { 'gzip-file-as-resource': { confirm: false } } },
        'files.yaml': { kind: 'mcp-server', name: 'files', transport: 'stdio', command: node, args: [FILESYSTEM, files], prestart: true },
      },
    }, 'res-test');
    gw = t.gw;
  }, 60000);
  afterAll(async () => {
    await t?.close();
  });

  for (const era of ['legacy', 'modern'] as const) {
    it(`${era}: lists every resource (nextCursor followed) under toolgate:// URIs that round-trip, and reads one`, async () => {
      const c = await connect(era);
      expect(c.getServerCapabilities()).toMatchObject({ resources: { subscribe: true, listChanged: true }, prompts: { listChanged: true }, completions: {}, logging: {} });
      const all = await listAll(c);
      expect(all.length).toBeGreaterThan(3);
      for (const r of all) {
        expect(r.uri.startsWith('toolgate://every_thing/')).toBe(true);
        expect(new URL(r.uri).protocol).toBe('toolgate:');
        expect(new URL(r.uri).host).toBe('every_thing');
      }
      const doc = all.find((r) => decodeURIComponent(r.uri).includes('static/document/architecture.md'));
      expect(doc).toBeDefined();
      // The server file's exclude: never listed.
      expect(all.some((r) => decodeURIComponent(r.uri).endsWith('extension.md'))).toBe(false);
      const read = await c.readResource({ uri: doc!.uri }, { cacheMode: 'bypass' });
      expect(read.contents[0]?.uri).toBe(doc!.uri);
      expect(JSON.stringify(read.contents)).toContain('Architecture');
    });

    it(`${era}: a template expands to a gateway URI the gateway reads`, async () => {
      const c = await connect(era);
      const { resourceTemplates } = await c.listResourceTemplates({}, { cacheMode: 'bypass' });
      const t = resourceTemplates.find((x) => decodeURIComponent(x.uriTemplate.replace(/\{[^}]*\}/g, '')).includes('dynamic/text'));
      expect(t, JSON.stringify(resourceTemplates)).toBeDefined();
      const uri = t!.uriTemplate.replace(/\{[^}]*\}/, '7');
      const read = await c.readResource({ uri }, { cacheMode: 'bypass' });
      expect(read.contents[0]?.uri).toBe(uri);
      expect(JSON.stringify(read.contents)).toMatch(/7/);
    });
  }

  it('reads are audited with caller, server, uri, bytes and a hash, never the content', async () => {
    const c = await connect('legacy');
    const all = await listAll(c);
    const doc = all.find((r) => decodeURIComponent(r.uri).includes('architecture.md'))!;
    await c.readResource({ uri: doc.uri }, { cacheMode: 'bypass' });
    const rec = (await gw.audit()).find((a) => a['mcpMethod'] === 'resources/read' && a['uri'] === doc.uri) as Record<string, unknown>;
    expect(rec).toMatchObject({ caller: 'all', server: 'every_thing', upstreamUri: 'demo://resource/static/document/architecture.md', outcome: 'ok' });
    expect(rec['bytes']).toBeGreaterThan(100);
    expect(String(rec['responseHash'])).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(JSON.stringify(rec)).not.toContain('Architecture');
  });

  it('a read over maxReadBytes is cut and the rest pages as toolgate:page resources of the same caller only', async () => {
    const c = await connect('legacy');
    const all = await listAll(c);
    const doc = all.find((r) => decodeURIComponent(r.uri).includes('structure.md'))!;
    const read = await c.readResource({ uri: doc.uri }, { cacheMode: 'bypass' });
    const more = read._meta?.['toolgate/truncated'] as { next: string; totalBytes: number; shownBytes: number };
    expect(more.totalBytes).toBeGreaterThan(2048);
    expect(Buffer.byteLength((read.contents[0] as { text: string }).text)).toBeLessThanOrEqual(2048);
    let text = (read.contents[0] as { text: string }).text;
    let next: string | undefined = more.next;
    while (next) {
      const p = await c.readResource({ uri: next }, { cacheMode: 'bypass' });
      text += (p.contents[0] as { text: string }).text;
      next = (p._meta?.['toolgate/truncated'] as { next?: string }).next;
    }
    expect(Buffer.byteLength(text)).toBe(more.totalBytes);
    const other = await connect('legacy', STATIC);
    await expect(other.readResource({ uri: more.next }, { cacheMode: 'bypass' })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Resource not found') });
  });

  it('visibility: a key narrowed to one tool sees no resource; a key with resources globs sees those only', async () => {
    const narrow = await connect('legacy', NARROW);
    expect(await listAll(narrow)).toEqual([]);
    const stat = await connect('legacy', STATIC);
    const seen = await listAll(stat);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((r) => decodeURIComponent(r.uri).startsWith('toolgate://every_thing/demo://resource/static/'))).toBe(true);
    // A hidden resource reads as a missing one (same error, no existence leak).
    const all = await listAll(await connect('legacy'));
    const dynamic = all.find((r) => decodeURIComponent(r.uri).includes('dynamic'))?.uri ?? 'toolgate://every_thing/demo%3A%2F%2Fresource%2Fdynamic%2Ftext%2F1';
    const hidden = await narrow.readResource({ uri: dynamic }, { cacheMode: 'bypass' }).catch((e: { code: number; message: string }) => e);
    const missing = await narrow.readResource({ uri: 'toolgate://every_thing/demo%3A%2F%2Fnope' }, { cacheMode: 'bypass' }).catch((e: { code: number; message: string }) => e);
    // (the SDK client reads the 2025 wire code -32002 with data.uri as its ResourceNotFoundError, code -32602)
    expect(hidden).toMatchObject({ code: -32602, message: expect.stringContaining('Resource not found') });
    expect(missing).toMatchObject({ code: -32602, message: expect.stringContaining('Resource not found') });
  });

  for (const era of ['legacy', 'modern'] as const) {
    it(`${era}: hostile URIs get the spec's errors and never reach a server`, async () => {
      const c = await connect(era);
      const notFound = -32602; // resource not found (the SDK client maps 2025's -32002 to it)
      const bad = [
        ['toolgate://every_thing/demo%3A%2F%2Fresource%2Fstatic%2Fdocument%2F..%2F..%2Fsecret', -32602],
        ['toolgate://every_thing/demo%3A%2F%2Fresource%2Fstatic%2Fdocument%2F%252e%252e%2Fsecret', -32602],
        ['file:///etc/passwd', notFound],
        ['toolgate://files/file%3A%2F%2F%2Fetc%2Fpasswd', notFound],
        ['toolgate://nosuch/x', notFound],
        ['toolgate://every_thing/%E0%A4%A', notFound],
      ] as const;
      for (const [uri, code] of bad) {
        await expect(c.readResource({ uri }, { cacheMode: 'bypass' }), uri).rejects.toMatchObject({ code });
      }
    });
  }

  it('subscriptions: updates reach the subscribed session only; a flood is bounded', async () => {
    const a = await connect('legacy');
    const b = await connect('legacy');
    const all = await listAll(a);
    const uri = all.find((r) => decodeURIComponent(r.uri).includes('architecture.md'))!.uri;
    const heardA: string[] = [];
    const heardB: string[] = [];
    a.setNotificationHandler('notifications/resources/updated', (n) => void heardA.push(n.params.uri));
    b.setNotificationHandler('notifications/resources/updated', (n) => void heardB.push(n.params.uri));
    await a.subscribeResource({ uri });
    // server-everything sends updates for its subscribed URIs once toggled (its session is the gateway's).
    expect((await gw.call('every_thing.toggle-subscriber-updates', {}, { key: ALL })).statusCode).toBe(200);
    await untilAsync(async () => heardA.length > 0, 'an update', 15000);
    expect(heardA[0]).toBe(uri);
    expect(heardB).toEqual([]);
    await a.unsubscribeResource({ uri });
    const others = all.filter((r) => r.uri !== uri).slice(0, 4);
    await a.subscribeResource({ uri: others[0]!.uri });
    await a.subscribeResource({ uri: others[1]!.uri });
    await a.subscribeResource({ uri: others[2]!.uri });
    await expect(a.subscribeResource({ uri: others[3]!.uri })).rejects.toMatchObject({ code: -32600 });
  }, 30000);

  it('list_changed reaches the sessions that may see the server (not a narrowed key\'s), and the new resource is listed and read', async () => {
    const a = await connect('legacy');
    const narrow = await connect('legacy', NARROW);
    let changedA = 0;
    let changedNarrow = 0;
    a.setNotificationHandler('notifications/resources/list_changed', () => void changedA++);
    narrow.setNotificationHandler('notifications/resources/list_changed', () => void changedNarrow++);
    await listAll(a); // the listing is cached: the change must drop it
    const data = `data:text/plain;base64,${Buffer.from('zipped through the gateway').toString('base64')}`;
    const res = await gw.call('every_thing.gzip-file-as-resource', { name: 'via-gateway.gz', data }, { key: ALL });
    expect(res.statusCode, res.body).toBe(200);
    await untilAsync(async () => changedA > 0, 'list_changed', 10000);
    const uri = (await listAll(a)).find((r) => decodeURIComponent(r.uri).endsWith('session/via-gateway.gz'))?.uri;
    expect(uri).toBeDefined();
    const read = await a.readResource({ uri: uri! }, { cacheMode: 'bypass' });
    expect(read.contents[0]).toMatchObject({ uri, mimeType: 'application/gzip' });
    expect(changedNarrow).toBe(0);
  }, 30000);

  it('modern: a subscriptions/listen stream hears updates of the URIs it named and may see; a hidden URI is dropped from its filter', async () => {
    const c = await connect('modern');
    const uri = (await listAll(c)).find((r) => decodeURIComponent(r.uri).includes('how-it-works.md'))!.uri;
    const heard: string[] = [];
    c.setNotificationHandler('notifications/resources/updated', (n) => void heard.push(n.params.uri));
    const sub = await c.listen({ resourceSubscriptions: [uri] });
    const narrow = await connect('modern', NARROW);
    const heardNarrow: string[] = [];
    narrow.setNotificationHandler('notifications/resources/updated', (n) => void heardNarrow.push(n.params.uri));
    const narrowSub = await narrow.listen({ resourceSubscriptions: [uri] });
    // server-everything's updates are on for the gateway's upstream session since the subscriptions test toggled them.
    await untilAsync(async () => heard.length > 0, 'an update', 15000);
    expect(heard[0]).toBe(uri);
    expect(heardNarrow).toEqual([]);
    await sub.close();
    await narrowSub.close();
  }, 40000);

  it('modern: a subscriptions/listen naming more URIs than mcp.resources.maxSubscriptionsPerSession is refused, not cut short', async () => {
    const c = await connect('modern');
    const uris = (await listAll(c)).slice(0, 4).map((r) => r.uri);
    expect(uris).toHaveLength(4); // the test's bound is 3
    await expect(c.listen({ resourceSubscriptions: uris })).rejects.toThrow(/Subscription limit reached: at most 3/);
    const sub = await c.listen({ resourceSubscriptions: uris.slice(0, 3) }); // at the bound: served
    await sub.close();
  }, 30000);
});
