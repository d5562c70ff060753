import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Upstream, json } from '../helpers/upstream.js';
import { httpTool, startGateway, type TestGateway } from '../helpers/app.js';

/**
 * What really reaches an upstream on 127.0.0.1: the URL a URL guard checked (re-serialized), the
 * path a path guard checked (unchanged), and URL templates that cannot be climbed out of.
 */
describe('what the upstream receives', () => {
  let up: Upstream;
  let gw: TestGateway;
  let root: string;
  const str = (name: string) => ({ type: 'object', properties: { [name]: { type: 'string' } } });
  const seen = (prefix: string) => up.seen.filter((s) => s.url.startsWith(prefix));

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'toolgate-urlsafety-')));
    mkdirSync(join(root, 'shared'));
    symlinkSync('/etc', join(root, 'shared', 'link-etc'));
    up = await new Upstream().start();
    up.on((req, res, body) => json(res, 200, { url: req.url, body: body ? (JSON.parse(body) as unknown) : null }));
    gw = await startGateway({
      tools: {
        'items.yaml': httpTool('items.get', `${up.url}/api/v1/items/{{id}}`, { inputSchema: str('id') }),
        'pair.yaml': {
          ...httpTool('files.pair', '', { inputSchema: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } } } }),
          backends: [{ id: 'up', http: { url: `${up.url}/api/v1/files/{{a}}{{b}}` } }],
        },
        'search.yaml': httpTool('search.q', `${up.url}/search?q={{q}}&limit=5`, { inputSchema: str('q') }),
        'fetch.yaml': {
          name: 'web.fetch',
          description: 'Fetches a URL through an upstream fetcher',
          sideEffect: 'read',
          inputSchema: str('url'),
          guards: [{ arg: 'url', urlHosts: [] }],
          backends: [{ id: 'up', http: { method: 'POST', url: `${up.url}/fetch`, body: '{{arguments}}' } }],
        },
        'fetch2.yaml': {
          name: 'web.fetch_into',
          description: 'Fetches a URL, the URL inside a body template',
          sideEffect: 'read',
          inputSchema: str('url'),
          guards: [{ arg: 'url', urlHosts: ['*.example.com'] }],
          backends: [{ id: 'up', http: { method: 'POST', url: `${up.url}/fetch2?u={{url}}`, body: { target: '{{url}}' } } }],
        },
        'write.yaml': {
          name: 'files.write',
          description: 'Writes a file',
          sideEffect: 'write',
          confirm: false,
          inputSchema: str('path'),
          guards: [{ arg: 'path', pathPrefixes: [join(root, 'shared')] }],
          backends: [{ id: 'up', http: { method: 'POST', url: `${up.url}/write`, body: '{{arguments}}' } }],
        },
      },
    });
  });
  afterAll(async () => {
    await gw.close();
    await up.close();
    rmSync(root, { recursive: true, force: true });
  });

  describe('URL placeholders cannot climb out of the templated path', () => {
    it.each(['..', '.', '../admin', 'a/../../..', '..\\..', './x'])('refuses id %j before anything is sent', async (id) => {
      const before = up.seen.length;
      const res = await gw.call('items.get', { id });
      expect(res.statusCode).toBe(422);
      expect(res.json().error).toMatchObject({ code: 'INVALID_ARGUMENTS', details: [{ path: '/id' }] });
      expect(up.seen.length).toBe(before);
    });

    it('refuses two placeholders that make a dot segment together', async () => {
      const res = await gw.call('files.pair', { a: '.', b: '.' });
      expect(res.statusCode).toBe(422);
      expect(res.json().error.details.map((d: { path: string }) => d.path)).toEqual(['/a', '/b']);
      expect(seen('/api/v1/files')).toHaveLength(0);
      expect((await gw.call('files.pair', { a: 'x', b: '.y' })).statusCode).toBe(200);
      expect(seen('/api/v1/files').map((s) => s.url)).toEqual(['/api/v1/files/x.y']);
    });

    it.each([
      ['%2e%2e', '/api/v1/items/%252e%252e'],
      ['.%2e', '/api/v1/items/.%252e'],
      ['%2E', '/api/v1/items/%252E'],
      ['dir/sub/file.txt', '/api/v1/items/dir%2Fsub%2Ffile.txt'],
      ['..x/x..', '/api/v1/items/..x%2Fx..'],
      ['...', '/api/v1/items/...'],
      ['x?admin=1#f', '/api/v1/items/x%3Fadmin%3D1%23f'],
    ])('sends id %j as one encoded segment: %s', async (id, url) => {
      const res = await gw.call('items.get', { id });
      expect(res.statusCode).toBe(200);
      expect(res.json().result.structuredContent.url).toBe(url);
    });

    it('encodes a query placeholder: & = # cannot add parameters (and .. is harmless there)', async () => {
      const res = await gw.call('search.q', { q: 'a&admin=1#x' });
      expect(res.json().result.structuredContent.url).toBe('/search?q=a%26admin%3D1%23x&limit=5');
      expect((await gw.call('search.q', { q: '../..' })).json().result.structuredContent.url).toBe('/search?q=..%2F..&limit=5');
    });

    it('no request ever reached a path outside the templates', () => {
      const allowed = ['/api/v1/items/', '/api/v1/files/', '/search?', '/fetch', '/write'];
      expect(up.seen.filter((s) => !allowed.some((a) => s.url.startsWith(a)))).toEqual([]);
    });
  });

  describe('a URL guard forwards the URL it checked', () => {
    it('sends the WHATWG serialization, not the raw text', async () => {
      const res = await gw.call('web.fetch', { url: 'HTTP://Example.COM:80/a/./b/../c?q=ä' });
      expect(res.statusCode).toBe(200);
      expect(res.json().result.structuredContent.body).toEqual({ url: 'http://example.com/a/c?q=%C3%A4' });
    });

    it('the checked URL replaces the argument everywhere it is templated', async () => {
      const res = await gw.call('web.fetch_into', { url: 'https://API.example.com' });
      expect(res.statusCode).toBe(200);
      expect(res.json().result.structuredContent).toEqual({
        url: `/fetch2?u=${encodeURIComponent('https://api.example.com/')}`,
        body: { target: 'https://api.example.com/' },
      });
    });

    it.each(['http://example.com\\@127.0.0.1/', 'http://example.com\\@169.254.169.254/latest/meta-data/', 'http://exam\tple.com/', 'http://127.1/', 'http://foo.localhost/', 'http://[64:ff9b::a9fe:a9fe]/'])(
      'refuses %j with 403 and sends nothing',
      async (url) => {
        const before = seen('/fetch').length;
        const res = await gw.call('web.fetch', { url });
        expect(res.statusCode).toBe(403);
        expect(res.json().error.code).toBe('FORBIDDEN');
        expect(seen('/fetch').length).toBe(before);
      },
    );
  });

  describe('a path guard sends the path it checked', () => {
    it('sends the path exactly as written, and refuses a symlink whose last part does not exist yet', async () => {
      const ok = join(root, 'shared', 'new.txt');
      expect((await gw.call('files.write', { path: ok })).json().result.structuredContent.body).toEqual({ path: ok });
      const before = seen('/write').length;
      const res = await gw.call('files.write', { path: join(root, 'shared', 'link-etc', 'new.conf') });
      expect(res.statusCode).toBe(403);
      expect(res.json().error.modelMessage).toContain(join(root, 'shared'));
      expect(seen('/write').length).toBe(before);
    });
  });
});
