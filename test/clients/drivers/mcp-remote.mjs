// mcp-remote driven over stdio, as a local-only MCP client (Claude Desktop, say) runs it: spawned with
// the gateway's URL and `--header Authorization:Bearer …`, spoken to with the SDK 1.x Client over
// its stdin/stdout (StdioClientTransport). argv[3]: the mcp-remote binary (dist/proxy.js). With an
// empty job.key it sends no header and does its own OAuth sign-in (job.env: its BROWSER and so on).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { job, textOf, elicitAnswer, run } from './common.mjs';

const configDir = mkdtempSync(join(tmpdir(), 'mcp-remote-'));
process.on('exit', () => rmSync(configDir, { recursive: true, force: true }));

run(async () => {
  const elicited = [];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [process.argv[3], job.url, ...(job.key ? ['--header', `Authorization:Bearer ${job.key}`] : []), '--transport', job.transport === 'sse' ? 'sse-only' : 'http-only', ...(job.verbose ? [] : ['--silent'])],
    // its OAuth state dir, away from $HOME
    env: { ...process.env, MCP_REMOTE_CONFIG_DIR: configDir, ...job.env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => (stderr = (stderr + d).slice(-2000)));
  const client = new Client({ name: 'stdio-host', version: '1' }, { capabilities: job.elicit ? { elicitation: {} } : {} });
  if (job.elicit) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      elicited.push(req.params.message);
      return elicitAnswer();
    });
  }
  try {
    await client.connect(transport, { timeout: 30_000 });
  } catch (e) {
    throw new Error(`${e.message}; mcp-remote stderr: ${stderr}`);
  }
  const { tools } = await client.listTools();
  const results = [];
  for (const c of job.calls) {
    const r = await client.callTool({ name: c.name, arguments: c.arguments });
    results.push({ name: c.name, text: textOf(r), isError: r.isError === true });
  }
  await client.close();
  return { tools: tools.map((t) => t.name), results, elicited };
});
