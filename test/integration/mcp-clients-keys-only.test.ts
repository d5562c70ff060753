import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/app.js';
import { clientFile, ensureClients, runDriver } from '../helpers/clients.js';
import { startClientGateway } from '../helpers/client-gateway.js';

const ADVICE = /this gateway takes API keys only and has no OAuth authorization server.*Authorization: ?Bearer/;

/**
 * OAuth clients against a gateway with API keys only and a key it does not know: they start an
 * OAuth flow on the 401 and fail at dynamic client registration. What they print must be the
 * gateway's advice (send a known key), not "no route POST /register".
 */
describe('real OAuth-capable MCP clients, unknown key, API keys only', () => {
  let gw: TestGateway;
  let base: string;
  const saved = process.env['MCP_AUTO_OPEN_ENABLED'];

  beforeAll(async () => {
    await ensureClients();
    ({ gw, base } = await startClientGateway());
    // The Inspector 2.x CLI starts OAuth only for a person at a terminal; this stands in for one.
    process.env['MCP_AUTO_OPEN_ENABLED'] = 'true';
  }, 11 * 60_000);
  afterAll(async () => {
    if (saved === undefined) delete process.env['MCP_AUTO_OPEN_ENABLED'];
    else process.env['MCP_AUTO_OPEN_ENABLED'] = saved;
    await gw?.close();
  });

  it('mcp-remote: its failed registration shows the gateway\'s advice to send a known API key', async () => {
    const report = await runDriver('mcp-remote', { url: `${base}/mcp`, key: 'not-a-key-of-this-gateway', transport: 'http', calls: [], verbose: true }, { node: 'current', args: [clientFile('mcp-remote/dist/proxy.js')], timeoutMs: 45_000 });
    expect(report.tools).toBeUndefined();
    expect(report.error).toMatch(/status: 404/); // its registration error, as it prints it (the tail of its stderr)
    expect(report.error).toMatch(ADVICE);
    expect(report.error).not.toContain('no route POST /register');
  }, 60_000);

  it('Inspector CLI 1.x (no OAuth): the 401 it prints says the gateway takes API keys and how to send one', async () => {
    const report = await runDriver('inspector', { url: `${base}/mcp`, key: 'not-a-key-of-this-gateway', transport: 'http', calls: [] }, { node: 'current', args: ['v1'] });
    expect(report.tools).toBeUndefined();
    expect(report.error).toMatch(/unknown API key: this gateway takes API keys only/);
  }, 60_000);

  it('Inspector 2.x --cli: the OAuth error it prints is the gateway\'s advice', async () => {
    const report = await runDriver('inspector', { url: `${base}/mcp`, key: 'not-a-key-of-this-gateway', transport: 'http', calls: [] }, { node: 'current', args: ['v2'] });
    expect(report.tools).toBeUndefined();
    expect(report.error).toMatch(ADVICE);
    expect(report.error).not.toContain('no route POST /register');
  }, 60_000);
});
