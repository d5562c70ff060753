// One long-lived target of bench/mcp-pool.mjs in a process of its own: `pool DIST` (McpPool of that
// build) or `direct` (a bare SDK client). The parent sends { n, from } and gets back the n call
// latencies (ms), timed here; { close: true } ends it. Own process, so that no two targets share a
// heap, a garbage collector or the JIT's state (they did: see bench/mcp-pool.mjs).
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [kind, dist, everything] = process.argv.slice(2);
const serverParams = { command: process.execPath, args: [everything, 'stdio'], stderr: 'pipe' };
const echoArgs = (i) => ({ name: 'echo', arguments: { message: `bench ${i}` } });

let call;
let close;
if (kind === 'pool') {
  const { McpPool } = await import(pathToFileURL(`${dist}/mcp/pool.js`).href);
  const pool = new McpPool([{ kind: 'mcp-server', name: 'ev', transport: 'stdio', command: serverParams.command, args: serverParams.args, prestart: true }]);
  await pool.start();
  call = (i) => pool.callTool('ev', 'echo', echoArgs(i).arguments, { deadline: Date.now() + 10000 });
  close = () => pool.close();
} else {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StdioClientTransport(serverParams));
  call = (i) => client.callTool(echoArgs(i), undefined, { timeout: 10000 });
  close = () => client.close();
}

process.on('message', async (m) => {
  if (m.close) {
    await close();
    process.exit(0);
  }
  const samples = [];
  for (let i = 0; i < m.n; i++) {
    const t0 = performance.now();
    await call(m.from + i);
    samples.push(performance.now() - t0);
  }
  process.send({ samples });
});
process.send({ ready: true });
