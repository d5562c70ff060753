import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { launchChromium, type Browser } from '../helpers/chromium.js';
import { Upstream, json } from '../helpers/upstream.js';
import { echoTool, httpTool, startGateway, type TestGateway } from '../helpers/app.js';
import { CONSOLE_CSP } from '../../src/routes/console.js';

const KEYS = { agent: 'console-agent-key-01', approver: 'console-approver-key-02', admin: 'console-admin-key-03' };
const SCRIPT = '<script>window.__pwned=1</script>';
const IMG = '<img src=x onerror="window.__pwned=1">';

/** A GET with the path sent exactly as written (fetch and inject would normalise dot segments). */
function rawGet(base: string, path: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The console page served by the gateway, driven in headless Chromium: approve, reject, audit, and nothing executes. */
describe('approvals console (/console)', () => {
  let up: Upstream;
  let gw: TestGateway;
  let base = '';
  let context: BrowserContext | undefined;
  let browser: Browser | undefined;
  let shotsDir = '';
  let shots = 0;
  const requests: string[] = [];
  const consoleErrors: string[] = [];

  const as = (who: keyof typeof KEYS) => ({ authorization: `Bearer ${KEYS[who]}`, 'content-type': 'application/json' });
  /** The agent's gated call over real HTTP; returns the 202 body. */
  async function gatedCall(args: Record<string, unknown>, sessionId: string) {
    const res = await fetch(`${base}/v1/tools/files.delete/call`, { method: 'POST', headers: as('agent'), body: JSON.stringify({ arguments: args, sessionId }) });
    expect(res.status).toBe(202);
    return (await res.json()) as { callId: string; confirmation: { id: string } };
  }
  async function shot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: join(shotsDir, `${String(++shots).padStart(2, '0')}-${name}.png`), fullPage: true });
  }
  async function openConsole(key: string): Promise<Page> {
    const page = await context!.newPage();
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
    const res = await page.goto(`${base}/console`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toBe(CONSOLE_CSP);
    await page.fill('#key', key);
    await page.click('#connect');
    return page;
  }
  const pwned = (page: Page) => page.evaluate(() => (globalThis as Record<string, unknown>)['__pwned']);

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((_req, res) => json(res, 200, { tempC: 21 }));
    gw = await startGateway({
      config: {
        confirmations: { ttlSeconds: 600, fourEyes: true },
        auth: {
          keys: [
            { id: 'agent-1', key: KEYS.agent, roles: ['agent'] },
            { id: 'approver-1', key: KEYS.approver, roles: ['approver'] },
            { id: 'admin-1', key: KEYS.admin, roles: ['approver', 'admin'] },
          ],
        },
      },
      tools: {
        'delete.yaml': echoTool('files.delete', {
          description: 'Deletes a file (echo backend)',
          sideEffect: 'destructive',
          redact: ['password'],
          inputSchema: { type: 'object', required: ['path'], properties: { path: { type: 'string' }, comment: { type: 'string' }, password: { type: 'string' } } },
        }),
        'weather.yaml': httpTool('weather.current', `${up.url}/weather`),
      },
    });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    shotsDir = mkdtempSync(join(tmpdir(), 'toolgate-console-shots-'));
    browser = await launchChromium({ viewport: { width: 1200, height: 900 } });
    context = browser.context;
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await up?.close();
  });

  it('serves the static page without a key, with a strict CSP; nothing outside the fixed file list', async () => {
    const page = await fetch(`${base}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    );
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await page.text();
    expect(html).toContain('/console/app.js');
    expect(html).not.toMatch(/<script>|<style|\sstyle=|\son[a-z]+=/i); // no inline script, style or handler: the CSP would block them

    const js = await fetch(`${base}/console/app.js`);
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(js.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(await js.text()).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
    const css = await fetch(`${base}/console/app.css`);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect((await fetch(`${base}/console/`)).status).toBe(200);

    for (const p of ['/console/../package.json', '/console/%2e%2e/package.json', '/console/..%2fpackage.json', '/console/%2e%2e%2f%2e%2e%2fpackage.json', '/console/app.ts', '/console/index.html/..', '/console/assets/app.js']) {
      const res = await rawGet(base, p);
      expect(res.status, p).toBe(404);
      expect(res.body, p).not.toContain('"name": "toolgate"');
    }
    const injected = await gw.app.inject({ method: 'GET', url: '/console/../package.json' });
    expect(injected.statusCode).toBe(404);

    const doc = gw.app.swagger() as { paths?: Record<string, unknown> };
    expect(Object.keys(doc.paths ?? {}).filter((p) => p.startsWith('/console'))).toEqual([]);
  });

  it('console: { enabled: false } serves no page', async () => {
    const off = await startGateway({ config: { console: { enabled: false } } });
    try {
      expect((await off.app.inject({ method: 'GET', url: '/console' })).statusCode).toBe(404);
    } finally {
      await off.close();
    }
  });

  it('approve: the hostile arguments show as text, nothing runs, the result appears and the list empties', async () => {
    const pending = await gatedCall({ path: SCRIPT, comment: IMG, password: 'hunter2-secret' }, 'sess-<b>bold</b>');
    const page = await openConsole(KEYS.approver);
    const card = page.locator(`.confirmation[data-id="${pending.confirmation.id}"]`);
    await card.waitFor();
    expect(await card.locator('.tool').textContent()).toBe('files.delete');
    expect(await card.locator('.caller').textContent()).toBe('agent-1');
    expect(await card.locator('.session').textContent()).toBe('sess-<b>bold</b>');
    const argsText = (await card.locator('pre.args').textContent()) ?? '';
    expect(argsText).toContain(SCRIPT);
    expect(argsText).toContain(IMG.replace(/"/g, '\\"')); // JSON-escaped quotes, otherwise literal
    expect(argsText).toContain('[REDACTED]');
    expect(argsText).not.toContain('hunter2-secret');
    await expect.poll(() => card.locator('.age').textContent()).toMatch(/\d+ s/);
    expect(await card.locator('.expiry').textContent()).toMatch(/^in \d+ min/);
    // Nothing was parsed as markup: one script (ours), no image, no bold element.
    expect(await page.locator('script').count()).toBe(2); // ours: oidc.js and app.js
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.locator('b').count()).toBe(0);
    expect(await pwned(page)).toBeUndefined();
    // The approver key has no admin role: the audit section says so.
    await expect.poll(() => page.locator('#audit-message').textContent()).toContain('lacks the admin role');
    // Tools and their backends' state.
    await expect.poll(() => page.locator('tr[data-tool="files.delete"] .state').getAttribute('data-state')).toBe('closed');
    await expect.poll(() => page.locator('tr[data-tool="weather.current"] .state').textContent()).toContain('up (http)');
    await shot(page, 'pending');
    if (process.env['TOOLGATE_SCREENSHOTS']) await page.screenshot({ path: '/tmp/console-pending.png', fullPage: true });

    await card.locator('input.note').fill('checked by <i>console</i>');
    await card.locator('button.approve').click();
    const result = page.locator(`.result[data-call-id="${pending.callId}"]`);
    await result.waitFor();
    expect(await result.locator('.title').textContent()).toBe('Approved files.delete → ok');
    const resultText = (await result.textContent()) ?? '';
    expect(resultText).toContain(SCRIPT); // the echo backend returns the real arguments: still text
    expect(resultText).toContain('checked by <i>console</i>');
    await expect.poll(() => page.locator('.confirmation').count()).toBe(0);
    await expect.poll(() => page.locator('#pending-empty').isVisible()).toBe(true);
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.locator('i').count()).toBe(0);
    expect(await pwned(page)).toBeUndefined();
    await shot(page, 'approved');
    if (process.env['TOOLGATE_SCREENSHOTS']) await page.screenshot({ path: '/tmp/console-approved.png', fullPage: true });

    const records = (await gw.audit()).filter((r) => r['callId'] === pending.callId);
    expect(records.map((r) => r['outcome'])).toEqual(['pending_confirmation', 'approved', 'ok']);
    expect(records[1]).toMatchObject({ approver: 'approver-1', note: 'checked by <i>console</i>' });
    await page.close();
  });

  it('reject: the call never runs, the card leaves, the decision shows', async () => {
    const page = await openConsole(KEYS.approver);
    await page.locator('#pending-empty').waitFor();
    const pending = await gatedCall({ path: '/srv/x', comment: IMG }, 'sess-2');
    await page.click('#refresh');
    const card = page.locator(`.confirmation[data-id="${pending.confirmation.id}"]`);
    await card.waitFor();
    await card.locator('input.note').fill('no');
    await card.locator('button.reject').click();
    const result = page.locator(`.result[data-call-id="${pending.callId}"]`);
    await result.waitFor();
    expect(await result.getAttribute('data-decision')).toBe('reject');
    expect(await result.locator('.title').textContent()).toBe('Rejected files.delete');
    await expect.poll(() => page.locator('.confirmation').count()).toBe(0);
    expect(await pwned(page)).toBeUndefined();
    await shot(page, 'rejected');

    const call = await fetch(`${base}/v1/calls/${pending.callId}`, { headers: as('agent') });
    expect(((await call.json()) as { status: string }).status).toBe('rejected');
    await expect.poll(async () => (await gw.audit()).some((r) => r['callId'] === pending.callId && r['outcome'] === 'rejected')).toBe(true);
    const rejected = (await gw.audit()).find((r) => r['callId'] === pending.callId && r['outcome'] === 'rejected');
    expect(rejected).toMatchObject({ approver: 'approver-1', note: 'no' });
    await page.close();
  });

  it('audit: an admin key sees the records, filtered by tool, caller and outcome', async () => {
    const page = await openConsole(KEYS.admin);
    const rows = page.locator('#audit-body tr');
    await expect.poll(() => rows.count()).toBeGreaterThan(3);
    expect(await page.locator('#audit-message').isVisible()).toBe(false);
    await page.fill('#audit-tool', 'files.delete');
    await page.fill('#audit-caller', 'agent-1');
    await page.selectOption('#audit-outcome', 'approved');
    await page.click('#audit-apply');
    await expect.poll(async () => (await rows.evaluateAll((trs) => trs.map((tr) => (tr as unknown as { dataset: Record<string, string> }).dataset['outcome']))).join(',')).toBe('approved');
    expect(await rows.first().textContent()).toContain('approver-1');
    expect(await rows.first().locator('.note-text').textContent()).toBe('note: checked by <i>console</i>');
    await page.selectOption('#audit-outcome', 'rejected');
    await page.click('#audit-apply');
    await expect.poll(async () => (await rows.evaluateAll((trs) => trs.map((tr) => (tr as unknown as { dataset: Record<string, string> }).dataset['outcome']))).join(',')).toBe('rejected');
    // Arguments in audit rows are text too.
    await page.selectOption('#audit-outcome', '');
    await page.click('#audit-apply');
    await expect.poll(async () => (await page.locator('#audit-body').textContent()) ?? '').toContain('onerror');
    expect(await page.locator('img').count()).toBe(0);
    expect(await pwned(page)).toBeUndefined();
    await shot(page, 'audit');

    // A wrong key is told so, and forgetting the key clears the page.
    await page.fill('#key', 'not-a-key');
    await page.click('#connect');
    await expect.poll(() => page.locator('#pending-message').textContent()).toContain('not accepted');
    await page.click('#forget');
    expect(await page.evaluate(() => (globalThis as unknown as { sessionStorage: { length: number } }).sessionStorage.length)).toBe(0);
    await page.close();
  });

  it('the page only ever talked to the gateway, and nothing broke the CSP', () => {
    const origin = new URL(base).origin;
    expect(requests.length).toBeGreaterThan(10);
    expect(requests.filter((u) => new URL(u).origin !== origin)).toEqual([]);
    expect(requests.some((u) => u.startsWith(`${origin}/v1/confirmations`))).toBe(true);
    // The wrong key's 401s are logged by Chromium as failed resources; anything else is a fault.
    expect(consoleErrors.filter((m) => !/status of 40[13]/.test(m))).toEqual([]);
    expect(shots).toBeGreaterThanOrEqual(4);
  });
});
