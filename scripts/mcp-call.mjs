#!/usr/bin/env node
// A minimal MCP client (the v2 SDK's, Streamable HTTP) for trying a tool through /mcp:
//   node scripts/mcp-call.mjs URL [TOOL [JSON-ARGUMENTS]]
// Without TOOL it lists the tools; with it, calls TOOL and prints the result. Exit 1 on an error result.
// An API key, when the gateway has keys: TOOLGATE_KEY=... (sent as a bearer token).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, tool, args = '{}'] = process.argv.slice(2);
if (!url) {
  process.stderr.write('usage: node scripts/mcp-call.mjs URL [TOOL [JSON-ARGUMENTS]]\n');
  process.exit(2);
}
const key = process.env.TOOLGATE_KEY;
const client = new Client({ name: 'toolgate-mcp-call', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(new URL(url), key ? { requestInit: { headers: { authorization: `Bearer ${key}` } } } : {});
try {
  await client.connect(transport);
  if (!tool) {
    const { tools } = await client.listTools();
    for (const t of tools) process.stdout.write(`${t.name}\t${(t.description ?? '').split('\n')[0]}\n`);
  } else {
    const result = await client.callTool({ name: tool, arguments: JSON.parse(args) });
    process.stdout.write(`${JSON.stringify(result)}\n`);
    if (result.isError) process.exitCode = 1;
  }
} catch (e) {
  process.stderr.write(`mcp-call: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
} finally {
  await client.close().catch(() => {});
}
