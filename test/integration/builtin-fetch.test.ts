import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Upstream, json } from '../helpers/upstream.js';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { DnsServer } from '../helpers/dns-server.js';

/**
 * `builtin: fetch`: the gateway fetches the URL itself, on sockets whose name lookup is judged
 * and pinned. A real DNS server on 127.0.0.1 answers (TTL 0), a real upstream on 127.0.0.1 records
 * what reached it: a name that resolves to loopback, or is rebound to it after the guard's check,
 * never reaches it.
 */
describe('builtin fetch: connections pinned to checked addresses', () => {
  let up: Upstream;
  let dns: DnsServer;
  let gw: TestGateway;
  let port = '';
  const tool = (name: string, guard: Record<string, unknown>) => ({
    name,
    description: 'Fetches a web page',
    sideEffect: 'read',
    inputSchema: { type: 'object', required: ['url'], properties: { url: { type: 'string' } } },
    guards: [{ arg: 'url', urlHosts: [], ...guard }],
    backends: [{ id: 'gw', builtin: 'fetch' }],
  });

  beforeAll(async () => {
    up = await new Upstream().start();
    port = new URL(up.url).port;
    up.on((req, res) => {
      if (req.url === '/redirect') {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
        res.end();
        return;
      }
      json(res, 200, { path: req.url, host: req.headers.host });
    });
    dns = await new DnsServer().start();
    dns.set('up.test', ['127.0.0.1']).set('sneaky.test', ['127.0.0.1']).set('rebind.test', ['93.184.216.34'], ['127.0.0.1']);
    gw = await startGateway({
      lookup: dns.lookup(),
      tools: {
        'private.yaml': tool('web.get_private', { allowPrivate: true }),
        'public.yaml': tool('web.get', {}),
        'resolving.yaml': tool('web.get_resolving', { resolve: true }),
      },
    });
  });
  afterAll(async () => {
    await gw.close();
    await dns.close();
    await up.close();
  });

  it('fetches through the resolver it was given, keeping the name in Host (and SNI)', async () => {
    const res = await gw.call('web.get_private', { url: `http://UP.test:${port}/page?x=1` });
    expect(res.statusCode).toBe(200);
    const data = res.json().result.structuredContent;
    expect(data).toMatchObject({ url: `http://up.test:${port}/page?x=1`, status: 200, contentType: 'application/json' });
    expect(JSON.parse(data.body)).toEqual({ path: '/page?x=1', host: `up.test:${port}` });
    expect(dns.queries).toContain('A up.test');
  });

  it('refuses at connect time a public-looking name that resolves to loopback', async () => {
    const before = up.seen.length;
    const res = await gw.call('web.get', { url: `http://sneaky.test:${port}/secret` });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toMatchObject({ code: 'FORBIDDEN', retryable: false });
    expect(res.json().error.modelMessage).toContain('private');
    expect(up.seen.length).toBe(before);
  });

  it('a name rebound between the check and the connection cannot switch it to loopback', async () => {
    const before = up.seen.length;
    const asked = () => dns.queries.filter((q) => q === 'A rebind.test').length;
    const res = await gw.call('web.get_resolving', { url: `http://rebind.test:${port}/admin` });
    // The guard's resolution saw 93.184.216.34 and passed; the socket's own saw 127.0.0.1 and refused.
    expect(asked()).toBe(2);
    expect(res.statusCode).toBe(403);
    expect(up.seen.length).toBe(before);
  });

  it('with resolve: true the guard itself refuses a name that resolves to loopback', async () => {
    const res = await gw.call('web.get_resolving', { url: `http://sneaky.test:${port}/` });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.message).toContain('refused by a guard');
  });

  it('does not follow a redirect: the answer names it', async () => {
    const before = up.seen.length;
    const res = await gw.call('web.get_private', { url: `http://up.test:${port}/redirect` });
    expect(res.json().result.structuredContent).toMatchObject({ status: 302, location: 'http://169.254.169.254/latest/meta-data/' });
    expect(up.seen.length).toBe(before + 1);
  });
});
