import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';

/**
 * The MCP conformance suite (@modelcontextprotocol/conformance 0.1.13, the last for Node 20), in
 * server mode against /mcp of the built gateway, judged against test/conformance/expected-failures.yml:
 * a new failure fails, and so does a listed scenario that starts to pass.
 */
describe('MCP conformance suite against /mcp', () => {
  let gw: ServerProcess;
  beforeAll(async () => {
    gw = await startServerProcess({ config: { auth: { mode: 'keys', keys: [] }, tools: { watch: false } }, tools: {} });
  });
  afterAll(async () => {
    gw.child.kill('SIGTERM');
    await gw.exited;
  });

  it('passes every scenario outside the baseline of expected failures', async () => {
    const args = ['server', '--url', `${gw.url}/mcp`, '--expected-failures', 'test/conformance/expected-failures.yml', '--output-dir', 'test-results/conformance'];
    const child = spawn('node_modules/.bin/conformance', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(out).toMatch(/Total: \d+ passed/);
    expect(code, out.slice(-3000)).toBe(0);
    expect(out).toMatch(/✓ tools-list/);
    expect(out).toMatch(/✓ dns-rebinding-protection/);
  }, 120_000);
});
