import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { echoTool } from '../helpers/app.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';

/** The real server process: open MCP streams must not hold a SIGTERM shutdown. */
describe('/mcp and shutdown', () => {
  let server: ServerProcess | undefined;
  afterAll(() => {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
  });

  it('SIGTERM with an MCP session and its GET stream open: the sessions are closed and the process exits 0', async () => {
    server = await startServerProcess({ config: { server: { drainTimeoutMs: 2000 } }, tools: { 'echo.yaml': echoTool('debug.echo') } });
    let streamOpen!: () => void;
    const open = new Promise<void>((r) => (streamOpen = r));
    const client = new Client({ name: 'shutdown-test', version: '1.0.0' });
    client.onerror = () => undefined; // the client retries its stream against a server that is gone
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      fetch: async (url, init) => {
        const res = await fetch(url, init);
        if (init?.method === 'GET' && res.status === 200) streamOpen();
        return res;
      },
      reconnectionOptions: { maxReconnectionDelay: 1000, initialReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1, maxRetries: 0 },
    });
    await client.connect(transport);
    expect((await client.callTool({ name: 'debug.echo', arguments: { a: 1 } })).isError).toBe(false);
    await open;
    server.child.kill('SIGTERM');
    // Without the sessions closed on shutdown, the open stream would hold the server until the
    // forced exit (status 1).
    expect(await server.exited).toBe(0);
    await client.close().catch(() => undefined);
  });
});
