import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { launchChromium, type Browser } from '../helpers/chromium.js';
import { startGateway, type TestGateway } from '../helpers/app.js';

const KEY = 'console-mcp-approver-key-01';
const HOSTILE = '<img src=x onerror="window.__pwned=1">';
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/mcp/${name}`, import.meta.url));
const node = process.execPath;
const mcpTool = (name: string, server: string, tool: string) => ({
  name, description: `a tool of MCP server ${server}`, sideEffect: 'read', timeoutMs: 2000, backends: [{ id: 'mcp', mcp: { server, tool } }],
});

/** The console's tools page, in real Chromium: a tool of an MCP server that is not up says the server's state and why. */
describe('console: MCP servers that are not up', () => {
  let gw: TestGateway;
  let browser: Browser | undefined;
  let base = '';

  beforeAll(async () => {
    gw = await startGateway({
      config: { auth: { keys: [{ id: 'approver-1', key: KEY, roles: ['approver'] }] } },
      tools: {
        'typo.yaml': { kind: 'mcp-server', name: 'typo', transport: 'stdio', command: 'nodee', args: ['server.js'] },
        'future.yaml': { kind: 'mcp-server', name: 'future', transport: 'stdio', command: node, args: [fixture('future-server.mjs')] },
        'hostile.yaml': {
          kind: 'mcp-server', name: 'hostile', transport: 'stdio', command: node,
          args: ['-e', `process.stderr.write(${JSON.stringify(`${HOSTILE}\n`)}); process.exit(2)`],
        },
        'dual.yaml': { kind: 'mcp-server', name: 'dual', transport: 'stdio', command: node, args: [fixture('v2-server.mjs')], prestart: true },
        'typo-call.yaml': mcpTool('typo.call', 'typo', 'echo'),
        'future-call.yaml': mcpTool('future.call', 'future', 'echo'),
        'hostile-call.yaml': mcpTool('hostile.call', 'hostile', 'echo'),
      },
    });
    // Lazy servers connect on first use: one call each brings them to their state.
    for (const name of ['typo.call', 'future.call', 'hostile.call']) await gw.call(name, { text: 'x' }, { key: KEY });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium({ viewport: { width: 1400, height: 900 } });
  }, 30000);
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  async function toolsPage(): Promise<Page> {
    const page = await browser!.context.newPage();
    await page.goto(`${base}/console`);
    await page.fill('#key', KEY);
    await page.click('#connect');
    await page.waitForSelector('tr[data-tool="dual.echo"] td.backends .state');
    return page;
  }
  const note = (page: Page, tool: string) => page.locator(`tr[data-tool="${tool}"] .mcp-server`);

  it('names the state and the cause as GET /admin/mcp does; an up server shows none; hostile text stays text', async () => {
    const page = await toolsPage();
    await expect.poll(async () => (await note(page, 'typo.call').textContent()) ?? '', { timeout: 10000 }).toContain('MCP server typo: backoff');
    expect(await note(page, 'typo.call').textContent()).toContain('spawn nodee ENOENT');
    expect(await note(page, 'future.call').textContent()).toContain('MCP server future: failed');
    expect(await note(page, 'future.call').textContent()).toContain('no common protocol version');
    expect(await note(page, 'future.call').textContent()).toContain('2099-01-01');
    expect(await note(page, 'hostile.call').textContent()).toContain(HOSTILE);
    expect(await page.locator('tr[data-tool="hostile.call"] img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as Record<string, unknown>)['__pwned'])).toBeUndefined();
    expect(await note(page, 'dual.echo').count()).toBe(0);

    // The same words as the admin view.
    const view = (await fetch(`${base}/v1/tools/typo.call`, { headers: { authorization: `Bearer ${KEY}` } }).then((r) => r.json())) as {
      backends: { serverState: string; lastError: string }[];
    };
    expect(view.backends[0]?.serverState).toBe('backoff');
    expect(await note(page, 'typo.call').textContent()).toContain(view.backends[0]?.lastError.slice(0, 40));
  });
});
