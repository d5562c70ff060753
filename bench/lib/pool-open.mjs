// One long-lived target of bench/mcp-pool.mjs: `pool` (the McpPool of the build in DIST) or
// `direct` (a bare SDK client), on server-everything's echo. Used in a child (pool-target.mjs) or,
// with --same-process, in the bench itself.
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

export const echoArgs = (i) => ({ name: 'echo', arguments: { message: `bench ${i}` } });
export const serverParamsFor = (everything) => ({ command: process.execPath, args: [everything, 'stdio'], stderr: 'pipe' });

/** `{ call(i), close() }` for the target. */
export async function openTarget(kind, dist, everything) {
  const serverParams = serverParamsFor(everything);
  if (kind === 'pool') {
    const { McpPool } = await import(pathToFileURL(`${dist}/mcp/pool.js`).href);
    const pool = new McpPool([{ kind: 'mcp-server', name: 'ev', transport: 'stdio', command: serverParams.command, args: serverParams.args, prestart: true }]);
    await pool.start();
    return { call: (i) => pool.callTool('ev', 'echo', echoArgs(i).arguments, { deadline: Date.now() + 10000 }), close: () => pool.close() };
  }
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StdioClientTransport(serverParams));
  return { call: (i) => client.callTool(echoArgs(i), undefined, { timeout: 10000 }), close: () => client.close() };
}
