import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page, Request } from 'playwright-core';
import { launchChromium, type Browser } from '../helpers/chromium.js';
import { echoTool, startGateway, type TestGateway } from '../helpers/app.js';
import { freePort } from '../helpers/server-process.js';
import { Upstream, json } from '../helpers/upstream.js';
import { startIssuer, type TestIssuer } from '../helpers/oidc-provider.js';
import { consoleCsp } from '../../src/routes/console.js';

const AGENT_KEY = 'console-oidc-agent-key-01';
const APPROVER_KEY = 'console-oidc-approver-key-02';
const HOSTILE_USER = '<img src=x onerror="window.__pwned=1">';

/**
 * "Sign in with <issuer>" in real Chromium against a real OpenID provider (oidc-provider, login
 * automated) and a real listening gateway: authorization code + PKCE in the page, the token sent as
 * Bearer, a pending confirmation approved by the signed-in user.
 */
describe('console: sign in with the issuer (Chromium, oidc-provider)', () => {
  let iss: TestIssuer;
  let gw: TestGateway;
  let base = '';
  let browser: Browser | undefined;
  let context: BrowserContext;
  const requests: Request[] = [];
  const consoleErrors: string[] = [];

  async function gatedCall(path: string): Promise<{ callId: string; confirmation: { id: string } }> {
    const res = await fetch(`${base}/v1/tools/files.delete/call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${AGENT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { path } }),
    });
    expect(res.status).toBe(202);
    return (await res.json()) as { callId: string; confirmation: { id: string } };
  }
  /** A page with no session at the issuer yet (each test signs in afresh). */
  async function newPage(): Promise<Page> {
    await context.clearCookies();
    const page = await context.newPage();
    page.on('request', (r) => requests.push(r));
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
    return page;
  }
  const status = (page: Page) => page.locator('#status').textContent();
  const storage = (page: Page) => page.evaluate(() => JSON.stringify(Object.entries((globalThis as unknown as { sessionStorage: Record<string, string> }).sessionStorage)));
  const tokenPosts = () => iss.requests.filter((r) => r === 'POST /token').length;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    iss = await startIssuer({
      resources: [base, 'http://127.0.0.1:1/other'],
      clients: [{ client_id: 'toolgate-console', token_endpoint_auth_method: 'none', redirect_uris: [`${base}/console`], grant_types: ['authorization_code'], response_types: ['code'] }],
    });
    gw = await startGateway({
      config: {
        server: { publicUrl: base },
        confirmations: { ttlSeconds: 600, fourEyes: true },
        auth: {
          keys: [
            { id: 'agent-1', key: AGENT_KEY, roles: ['agent'] },
            { id: 'approver-1', key: APPROVER_KEY, roles: ['approver'] },
          ],
          oidc: [{ issuer: iss.issuer, audience: base, algorithms: ['RS256'] }],
        },
        console: { oidc: { issuer: iss.issuer, clientId: 'toolgate-console', scopes: ['openid', 'profile'] } },
      },
      tools: {
        'delete.yaml': echoTool('files.delete', { sideEffect: 'destructive', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } }),
      },
    });
    await gw.app.listen({ port, host: '127.0.0.1' });
    browser = await launchChromium({ viewport: { width: 1200, height: 900 } });
    context = browser.context;
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await iss?.close();
  });

  it('tells the page its public client and nothing secret; the CSP lets it reach the issuer and no one else', async () => {
    const res = await fetch(`${base}/console/config.json`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ oidc: { issuer: iss.issuer, clientId: 'toolgate-console', scopes: ['openid', 'profile'], resource: base } });
    const csp = consoleCsp([iss.issuer]);
    expect(csp).toContain(`connect-src 'self' ${iss.issuer};`);
    for (const p of ['/console', '/console/app.js', '/console/oidc.js', '/console/config.json']) expect((await fetch(`${base}${p}`)).headers.get('content-security-policy'), p).toBe(csp);
    const js = await (await fetch(`${base}/console/oidc.js`)).text();
    expect(js).not.toMatch(/client_secret|innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
  });

  it('signs in with authorization code + PKCE, sends the token as Bearer, and approves as that user', async () => {
    const pending = await gatedCall('/srv/report.txt');
    const page = await newPage();
    await page.goto(`${base}/console`);
    const button = page.locator('#signin');
    await button.waitFor();
    expect(await button.textContent()).toBe(`Sign in with ${new URL(iss.issuer).host}`);
    iss.defaultUser = 'alice';
    await button.click();
    // Issuer (login + consent automated) and back to the console, which exchanges the code.
    await expect.poll(() => status(page), { timeout: 15_000 }).toMatch(/^Signed in as alice\. Pending list refreshed/);
    expect(page.url()).toBe(`${base}/console`); // the code left the address bar
    expect(iss.logins.at(-1)).toEqual({ user: 'alice', clientId: 'toolgate-console' });

    const auth = requests.find((r) => r.url().startsWith(`${iss.issuer}/auth?`));
    expect(auth).toBeDefined();
    const q = new URL(auth!.url()).searchParams;
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('resource')).toBe(base);
    expect(q.get('redirect_uri')).toBe(`${base}/console`);
    const tokenReq = requests.find((r) => r.url() === `${iss.issuer}/token` && r.method() === 'POST');
    expect(tokenReq).toBeDefined();
    const form = new URLSearchParams(tokenReq!.postData() ?? '');
    expect(form.get('grant_type')).toBe('authorization_code');
    expect(form.get('code_verifier')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(form.has('client_secret')).toBe(false);
    expect(tokenReq!.headers()['authorization']).toBeUndefined();
    // The gateway got the issuer's token as Bearer, not a key.
    const v1 = requests.filter((r) => r.url().startsWith(`${base}/v1/`));
    expect(v1.length).toBeGreaterThan(0);
    for (const r of v1) expect(r.headers()['authorization']).toMatch(/^Bearer eyJ/);
    // The one-use PKCE verifier and state are gone; only the token (and who) stay in this tab.
    const stored = await storage(page);
    expect(stored).not.toContain('oidc.pending');
    expect(stored).not.toContain(form.get('code_verifier'));

    const card = page.locator(`.confirmation[data-id="${pending.confirmation.id}"]`);
    await card.waitFor();
    expect(await card.locator('.caller').textContent()).toBe('agent-1');
    await card.locator('button.approve').click();
    const result = page.locator(`.result[data-call-id="${pending.callId}"]`);
    await result.waitFor();
    expect(await result.locator('.title').textContent()).toBe('Approved files.delete → ok');
    const records = (await gw.audit()).filter((r) => r['callId'] === pending.callId);
    expect(records.map((r) => r['outcome'])).toEqual(['pending_confirmation', 'approved', 'ok']);
    expect(records[1]).toMatchObject({ approver: 'alice', approverSubject: 'alice', approverIssuer: iss.issuer, approverClientId: 'toolgate-console' });
    const token = (v1[0]!.headers()['authorization'] ?? '').slice('Bearer '.length);
    expect(JSON.stringify(await gw.audit())).not.toContain(token);

    // Signing out forgets the token.
    await page.click('#forget');
    expect(await storage(page)).toBe('[]');
    await page.close();
  });

  it('a forged answer (a code with a state this tab never sent) is ignored: no token request, the code leaves the URL', async () => {
    const before = tokenPosts();
    const page = await newPage();
    await page.goto(`${base}/console?code=stolen-code&state=forged-state&iss=${encodeURIComponent(iss.issuer)}`);
    await expect.poll(() => status(page)).toBe('Sign-in failed: the sign-in answer does not match a sign-in started in this tab (state): ignored');
    expect(page.url()).toBe(`${base}/console`);
    expect(tokenPosts()).toBe(before);
    expect(requests.some((r) => r.url().startsWith(`${iss.issuer}/token`) && r.frame().page() === page)).toBe(false);
    expect(await storage(page)).toBe('[]');
    await page.close();
  });

  it('a refused sign-in shows the issuer\'s error as text, runs nothing, and keeps no key', async () => {
    const page = await newPage();
    await page.goto(`${base}/console`);
    iss.defaultUser = HOSTILE_USER;
    try {
      await page.locator('#signin').click();
      await expect.poll(() => status(page), { timeout: 15_000 }).toBe(`Sign-in failed: the issuer refused: access_denied (no such user: ${HOSTILE_USER})`);
    } finally {
      iss.defaultUser = 'alice';
    }
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as Record<string, unknown>)['__pwned'])).toBeUndefined();
    expect(await storage(page)).toBe('[]');
    expect(page.url()).toBe(`${base}/console`);
    await page.close();
  });

  it('an answer naming another issuer (RFC 9207 iss) or arriving too late is ignored, and its verifier dropped', async () => {
    const before = tokenPosts();
    const page = await newPage();
    await page.goto(`${base}/console`);
    const plant = (at: number) =>
      page.evaluate(
        ([issuer, when]) =>
          (globalThis as unknown as { sessionStorage: { setItem(k: string, v: string): void } }).sessionStorage.setItem(
            'toolgate.console.oidc.pending',
            JSON.stringify({ state: 'planted-state', verifier: 'v'.repeat(43), issuer, tokenEndpoint: `${issuer}/token`, at: when }),
          ),
        [iss.issuer, at] as const,
      );
    await plant(Date.now());
    await page.goto(`${base}/console?code=some-code&state=planted-state&iss=${encodeURIComponent('http://127.0.0.1:9/evil')}`);
    await expect.poll(() => status(page)).toBe('Sign-in failed: the answer comes from another issuer (iss): ignored');
    expect(await storage(page)).toBe('[]');
    await plant(Date.now() - 11 * 60_000);
    await page.goto(`${base}/console?code=some-code&state=planted-state`);
    await expect.poll(() => status(page)).toBe('Sign-in failed: the sign-in took too long: start again');
    expect(await storage(page)).toBe('[]');
    // Replayed: the verifier is gone, so the same answer is refused again.
    await page.goto(`${base}/console?code=some-code&state=planted-state`);
    await expect.poll(() => status(page)).toBe('Sign-in failed: the sign-in answer does not match a sign-in started in this tab (state): ignored');
    expect(tokenPosts()).toBe(before);
    await page.close();
  });

  it('a signed-in user without the approver role is told so, and decides nothing', async () => {
    const pending = await gatedCall('/srv/bob.txt');
    const page = await newPage();
    await page.goto(`${base}/console`);
    iss.defaultUser = 'bob';
    try {
      await page.locator('#signin').click();
      await expect.poll(() => page.locator('#pending-message').textContent(), { timeout: 15_000 }).toContain("lacks the approver role");
    } finally {
      iss.defaultUser = 'alice';
    }
    expect(iss.logins.at(-1)?.user).toBe('bob');
    expect(await page.locator('.confirmation').count()).toBe(0);
    const call = await fetch(`${base}/v1/calls/${pending.callId}`, { headers: { authorization: `Bearer ${AGENT_KEY}` } });
    expect(((await call.json()) as { status: string }).status).toBe('pending_confirmation');
    await page.close();
  });

  it('a pasted key still works beside the sign-in', async () => {
    const pending = await gatedCall('/srv/by-key.txt');
    const page = await newPage();
    await page.goto(`${base}/console`);
    await page.locator('#signin').waitFor();
    await page.fill('#key', APPROVER_KEY);
    await page.click('#connect');
    await expect.poll(() => status(page)).toMatch(/^Connected\. Pending list refreshed/);
    await page.locator(`.confirmation[data-id="${pending.confirmation.id}"] button.approve`).click();
    await page.locator(`.result[data-call-id="${pending.callId}"]`).waitFor();
    const records = (await gw.audit()).filter((r) => r['callId'] === pending.callId);
    expect(records[1]).toMatchObject({ outcome: 'approved', approver: 'approver-1' });
    await page.close();
  });

  it('the page talked only to the gateway and the issuer, and nothing broke the CSP', () => {
    const allowed = new Set([new URL(base).origin, new URL(iss.issuer).origin]);
    expect(requests.filter((r) => !allowed.has(new URL(r.url()).origin)).map((r) => r.url())).toEqual([]);
    expect(consoleErrors.filter((m) => !/status of 40[13]/.test(m))).toEqual([]);
  });
});

describe('console sign-in: a discovery document that would lead the page astray', () => {
  let idp: Upstream;
  let elsewhere: Upstream;
  let gw: TestGateway;
  let base = '';
  let browser: Browser | undefined;
  let doc: Record<string, unknown> = {};

  beforeAll(async () => {
    idp = await new Upstream().start();
    elsewhere = await new Upstream().start();
    idp.on((_req, res) => json(res, 200, doc, { 'access-control-allow-origin': '*' }));
    elsewhere.on((_req, res) => json(res, 200, {}, { 'access-control-allow-origin': '*' }));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    gw = await startGateway({
      config: {
        server: { publicUrl: base },
        auth: { keys: [{ id: 'agent-1', key: AGENT_KEY, roles: ['agent'] }], oidc: [{ issuer: idp.url, audience: base }] },
        console: { oidc: { issuer: idp.url, clientId: 'toolgate-console' } },
      },
    });
    await gw.app.listen({ port, host: '127.0.0.1' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await idp?.close();
    await elsewhere?.close();
  });

  const cases: [string, () => Record<string, unknown>, () => string][] = [
    ['names another issuer', () => ({ issuer: elsewhere.url, authorization_endpoint: `${elsewhere.url}/auth`, token_endpoint: `${elsewhere.url}/token` }), () => 'Sign-in failed: its discovery document names another issuer'],
    [
      'puts the token endpoint on another origin',
      () => ({ issuer: idp.url, authorization_endpoint: `${idp.url}/auth`, token_endpoint: `${elsewhere.url}/token` }),
      () => `Sign-in failed: the issuer names an endpoint on another origin (${elsewhere.url}); the console talks to ${idp.url} only`,
    ],
    ['offers no S256', () => ({ issuer: idp.url, authorization_endpoint: `${idp.url}/auth`, token_endpoint: `${idp.url}/token`, code_challenge_methods_supported: ['plain'] }), () => 'Sign-in failed: it does not support PKCE with S256'],
  ];
  for (const [what, make, message] of cases) {
    it(`refuses one that ${what}: the page stays, nothing is stored, nothing reaches the other origin`, async () => {
      doc = make();
      const page = await browser!.context.newPage();
      await page.goto(`${base}/console`);
      await page.locator('#signin').click();
      await expect.poll(() => page.locator('#status').textContent()).toBe(message());
      expect(page.url()).toBe(`${base}/console`);
      expect(await page.evaluate(() => (globalThis as unknown as { sessionStorage: { length: number } }).sessionStorage.length)).toBe(0);
      expect(elsewhere.seen).toEqual([]);
      await page.close();
    });
  }
});

describe('console sign-in: an expired token', () => {
  it('is refused at the next refresh, and the page asks to sign in again', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const iss = await startIssuer({
      resources: [base],
      accessTokenTTL: 3,
      clients: [{ client_id: 'toolgate-console', token_endpoint_auth_method: 'none', redirect_uris: [`${base}/console`], grant_types: ['authorization_code'], response_types: ['code'] }],
    });
    const gw = await startGateway({
      config: {
        server: { publicUrl: base },
        auth: { oidc: [{ issuer: iss.issuer, audience: base, clockSkewSeconds: 0 }] },
        console: { oidc: { issuer: iss.issuer, clientId: 'toolgate-console' } },
      },
    });
    await gw.app.listen({ port, host: '127.0.0.1' });
    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      await page.goto(`${base}/console`);
      await page.locator('#signin').click();
      await expect.poll(() => page.locator('#status').textContent(), { timeout: 15_000 }).toMatch(/^Signed in as alice\./);
      await new Promise((r) => setTimeout(r, 4000));
      await page.click('#refresh');
      await expect.poll(() => page.locator('#status').textContent()).toBe('The sign-in was not accepted or has expired. Sign in again.');
      expect(await page.locator('#signin').isVisible()).toBe(true);
    } finally {
      await browser.close();
      await gw.close();
      await iss.close();
    }
  }, 30_000);
});

describe('console.oidc configuration', () => {
  it('refuses a client secret and an issuer the gateway does not trust', async () => {
    await expect(
      startGateway({ config: { auth: { oidc: [{ issuer: 'http://127.0.0.1:1' }] }, console: { oidc: { issuer: 'http://127.0.0.1:1', clientId: 'c', clientSecret: 's3cret' } } } }),
    ).rejects.toThrow(/clientSecret|additional/);
    await expect(
      startGateway({ config: { auth: { oidc: [{ issuer: 'http://127.0.0.1:1' }] }, console: { oidc: { issuer: 'http://127.0.0.1:2', clientId: 'c' } } } }),
    ).rejects.toThrow(/not one of auth\.oidc\[\]\.issuer/);
  });

  it('without console.oidc: no sign-in offered and the strict same-origin CSP', async () => {
    const gw = await startGateway({});
    try {
      const res = await gw.app.inject({ method: 'GET', url: '/console/config.json' });
      expect(res.json()).toEqual({ oidc: null });
      expect(res.headers['content-security-policy']).toBe(consoleCsp());
      expect(consoleCsp()).toContain("connect-src 'self';");
    } finally {
      await gw.close();
    }
  });
});
