import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, connect, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { launchChromium, type Browser } from '../helpers/chromium.js';
import { Upstream, json } from '../helpers/upstream.js';
import { startGateway, type TestGateway } from '../helpers/app.js';

// A name other than localhost that resolves to 127.0.0.1: the rebinding attacker's name.
const REBIND_RULE = '--host-resolver-rules=MAP rebind.test 127.0.0.1';

/** What the gateway answered, seen from its own socket (not from the page, which may be blinded). */
interface Seen {
  method: string;
  url: string;
  host: string;
  origin: string | undefined;
  status: number;
  cors: string | undefined;
}

/** One attempt of the page: what it could read of the answer. */
interface Attempt {
  name: string;
  outcome: string;
}

/**
 * A real browser against a real listening keyless gateway: a page of another local origin (a dev
 * server on 127.0.0.1, another port) tries fetch and form posts; a DNS-rebinding page reaches the
 * gateway under its own name. The gateway must refuse every state-changing attempt, the page must
 * read nothing, and the gateway's own console must keep working.
 */
describe('browser origin policy (real Chromium, keyless gateway)', () => {
  let up: Upstream;
  let gw: TestGateway;
  let base = '';
  let attacker: Server;
  let attackerBase = '';
  let proxy: TcpServer;
  let proxyPort = 0;
  /** Where the rebinding proxy sends a connection's bytes: first the attacker, then the gateway. */
  let rebindTo: 'attacker' | 'gateway' = 'attacker';
  const sockets = new Set<Socket>();
  let context: BrowserContext | undefined;
  let browser: Browser | undefined;
  const seen: Seen[] = [];
  const deletes = () => up.seen.filter((s) => s.url === '/delete').length;

  async function pending(): Promise<string> {
    const res = await fetch(`${base}/v1/tools/files.delete/call`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { path: '/srv/x' } }) });
    expect(res.status).toBe(202);
    return ((await res.json()) as { confirmation: { id: string } }).confirmation.id;
  }
  async function confirmation(id: string): Promise<{ status: string }> {
    return (await (await fetch(`${base}/v1/confirmations/${id}`)).json()) as { status: string };
  }
  async function generation(): Promise<number> {
    return ((await (await fetch(`${base}/admin/reload`)).json()) as { generation: number }).generation;
  }

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((_req, res) => json(res, 200, { deleted: true }));
    gw = await startGateway({
      config: { confirmations: { ttlSeconds: 600 } }, // no keys: keyless loopback mode
      tools: {
        'delete.yaml': {
          name: 'files.delete',
          description: 'Deletes a file (gated: destructive)',
          sideEffect: 'destructive',
          inputSchema: { type: 'object', required: ['path'], properties: { path: { type: 'string' } } },
          backends: [{ id: 'api', http: { method: 'POST', url: `${up.url}/delete`, body: '{{arguments}}' } }],
        },
      },
    });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    gw.app.server.on('request', (req, res) => {
      res.on('finish', () =>
        seen.push({
          method: req.method ?? '',
          url: req.url ?? '',
          host: req.headers.host ?? '',
          origin: req.headers.origin,
          status: res.statusCode,
          cors: res.getHeader('access-control-allow-origin') as string | undefined,
        }),
      );
    });

    // The other local web app: static pages, no CORS of its own needed (the page only sends).
    attacker = createServer((req, res) => {
      const gateway = base;
      const html = req.url === '/rebind'
        ? '<!doctype html><title>rebinding</title><p>same-origin fetches from here reach whatever rebind.test resolves to now</p>'
        : `<!doctype html><title>another local app</title>
<form id="reload" method="post" action="${gateway}/admin/reload" target="sink"></form>
<form id="approve" method="post" enctype="text/plain" target="sink"><input name='{"note":"' value='x"}'></form>
<form id="call" method="post" enctype="text/plain" action="${gateway}/v1/tools/files.delete/call" target="sink"><input name='{"arguments":{"path":"/srv/form","x":"' value='"}}'></form>
<iframe name="sink"></iframe>`;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', connection: 'close' });
      res.end(html);
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    attackerBase = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;

    // DNS rebinding at the socket level: the name and port stay, what answers changes. Each
    // connection is sent where rebindTo says when its first bytes arrive.
    proxy = createTcpServer((client) => {
      sockets.add(client);
      client.once('close', () => sockets.delete(client));
      client.once('data', (first) => {
        client.pause();
        const port = rebindTo === 'attacker' ? (attacker.address() as AddressInfo).port : Number(new URL(base).port);
        const server = connect(port, '127.0.0.1', () => {
          server.write(first);
          client.pipe(server).pipe(client);
          client.resume();
        });
        sockets.add(server);
        server.once('close', () => {
          sockets.delete(server);
          client.destroy();
        });
        client.once('close', () => server.destroy());
        server.on('error', () => client.destroy());
      });
      client.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyPort = (proxy.address() as AddressInfo).port;

    browser = await launchChromium({ extraArgs: [REBIND_RULE] });
    context = browser.context;
  });
  afterAll(async () => {
    await browser?.close();
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
    await new Promise<void>((resolve) => (attacker ? attacker.close(() => resolve()) : resolve()));
    await gw?.close();
    await up?.close();
  });

  /** Runs the page's attempts in its own origin and reports what it could read of each. */
  function attempt(page: Page, name: string, url: string, init: RequestInit): Promise<Attempt> {
    return page.evaluate(
      async ({ name, url, init }) => {
        try {
          const res = await fetch(url, init);
          const body = res.type === 'opaque' ? '' : await res.text();
          return { name, outcome: `${res.type} ${res.status} ${body}` };
        } catch (e) {
          return { name, outcome: `threw ${(e as Error).name}` };
        }
      },
      { name, url, init: init as Record<string, unknown> },
    );
  }

  it('a page of another local origin: fetch (JSON, text/plain, no-cors) and form posts change nothing and read nothing', async () => {
    const id = await pending();
    const before = await generation();
    const page = await context!.newPage();
    expect((await page.goto(`${attackerBase}/`))?.status()).toBe(200);
    const origin = attackerBase;
    const from = seen.length;

    const approveUrl = `${base}/v1/confirmations/${id}/approve`;
    const attempts: Attempt[] = [];
    const text = { 'content-type': 'text/plain' };
    attempts.push(await attempt(page, 'reload no-cors', `${base}/admin/reload`, { method: 'POST', mode: 'no-cors' }));
    attempts.push(await attempt(page, 'reload text/plain', `${base}/admin/reload`, { method: 'POST', headers: text, body: '' }));
    attempts.push(await attempt(page, 'reload json', `${base}/admin/reload`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }));
    attempts.push(await attempt(page, 'call json', `${base}/v1/tools/files.delete/call`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { path: '/srv/json' } }) }));
    attempts.push(await attempt(page, 'call text/plain', `${base}/v1/tools/files.delete/call`, { method: 'POST', headers: text, body: JSON.stringify({ arguments: { path: '/srv/text' } }) }));
    attempts.push(await attempt(page, 'approve no-cors', approveUrl, { method: 'POST', mode: 'no-cors' }));
    attempts.push(await attempt(page, 'approve text/plain', approveUrl, { method: 'POST', headers: text, body: 'null' }));
    attempts.push(await attempt(page, 'approve json', approveUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }));
    attempts.push(await attempt(page, 'audit read', `${base}/v1/audit`, {}));
    attempts.push(await attempt(page, 'tools read', `${base}/v1/tools`, {}));
    // Form submissions (navigations of the hidden frame), the oldest cross-site request there is.
    const submit = (form: string, action?: string) =>
      page.evaluate(`(() => { const f = document.getElementById(${JSON.stringify(form)}); ${action ? `f.action = ${JSON.stringify(action)};` : ''} f.submit(); })()`);
    await submit('reload');
    await page.waitForTimeout(200);
    await submit('approve', approveUrl);
    await page.waitForTimeout(200);
    await submit('call');
    await expect.poll(() => seen.slice(from).filter((s) => s.method === 'POST' && s.origin === origin).length).toBeGreaterThanOrEqual(8);

    // The page read nothing: CORS requests failed, no-cors ones are opaque (status 0, no body).
    for (const a of attempts) expect(a.outcome, a.name).toMatch(/^(threw TypeError|opaque 0 )$/);

    // The gateway's side: every request of that origin but the preflights and the plain read was 403.
    const mine = seen.slice(from).filter((s) => s.origin === origin);
    for (const s of mine) {
      expect(s.cors, `${s.method} ${s.url}`).toBeUndefined();
      if (s.method === 'OPTIONS') expect(s.status).toBe(404); // preflight: no CORS, so the JSON requests were never sent
      else if (s.method === 'GET' && s.url === '/v1/tools') expect(s.status).toBe(200); // read, but the page could not see it
      else expect(s.status, `${s.method} ${s.url}`).toBe(403);
    }
    expect(mine.filter((s) => s.method === 'POST' && s.url === '/admin/reload').length).toBe(3); // 2 fetches + the form
    expect(mine.filter((s) => s.method === 'POST' && s.url.endsWith('/approve')).length).toBe(3); // 2 fetches + the form
    expect(mine.filter((s) => s.method === 'POST' && s.url.endsWith('/call')).length).toBe(2); // 1 fetch + the form
    expect(mine.some((s) => s.method === 'GET' && s.url === '/v1/audit' && s.status === 403)).toBe(true);

    expect((await confirmation(id)).status).toBe('pending');
    expect(deletes()).toBe(0);
    expect(await generation()).toBe(before);
    const audit = await gw.audit();
    expect(audit.filter((r) => r['outcome'] === 'approved')).toEqual([]);
    expect(audit.filter((r) => r['outcome'] === 'pending_confirmation').length).toBe(1); // only the test's own
    await page.close();
  });

  it('a DNS-rebinding page (same origin as the name it rebinds) reads 403 FORBIDDEN: the Host is not loopback', async () => {
    const id = await pending();
    rebindTo = 'attacker';
    const page = await context!.newPage();
    const url = `http://rebind.test:${proxyPort}`;
    expect((await page.goto(`${url}/rebind`))?.status()).toBe(200);
    expect(await page.title()).toBe('rebinding');
    rebindTo = 'gateway'; // the name now resolves to the gateway
    const read = await attempt(page, 'tools', `${url}/v1/tools`, {});
    const approve = await attempt(page, 'approve', `${url}/v1/confirmations/${id}/approve`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const reload = await attempt(page, 'reload', `${url}/admin/reload`, { method: 'POST' });
    for (const a of [read, approve, reload]) {
      // Same-origin for the browser, so the page reads the answer: the one error shape, 403.
      expect(a.outcome, a.name).toMatch(/^basic 403 /);
      const body = JSON.parse(a.outcome.replace(/^basic 403 /, '')) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('FORBIDDEN');
      expect(body.error.message).toBe(`Host 'rebind.test:${proxyPort}' is not a loopback name (the gateway listens on loopback 127.0.0.1)`);
      expect(a.outcome).not.toContain('files.delete');
    }
    expect(seen.filter((s) => s.host === `rebind.test:${proxyPort}`).length).toBeGreaterThanOrEqual(3);
    expect((await confirmation(id)).status).toBe('pending');
    expect(deletes()).toBe(0);
    await page.close();
  });

  it('the gateway\'s own console (keyless, own origin) still approves, by 127.0.0.1 and by localhost', async () => {
    const id = await pending();
    const page = await context!.newPage();
    expect((await page.goto(`${base}/console`))?.status()).toBe(200);
    await page.click('#connect'); // an empty key: a gateway without keys
    const card = page.locator(`.confirmation[data-id="${id}"]`);
    await card.waitFor();
    await card.locator('button.approve').click();
    await page.locator('.result').first().waitFor();
    await expect.poll(async () => (await confirmation(id)).status).toBe('approved');
    expect(deletes()).toBe(1);

    const other = await pending();
    const local = await context!.newPage();
    const localBase = base.replace('127.0.0.1', 'localhost');
    expect((await local.goto(`${localBase}/console`))?.status()).toBe(200);
    const res = await attempt(local, 'approve', `/v1/confirmations/${other}/approve`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.outcome).toMatch(/^basic 200 /);
    expect(seen.some((s) => s.url === `/v1/confirmations/${other}/approve` && s.origin === localBase && s.status === 200)).toBe(true);
    expect(deletes()).toBe(2);
    await page.close();
    await local.close();
  });
});
