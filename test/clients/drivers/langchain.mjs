// @langchain/mcp-adapters: MultiServerMCPClient (argv[3] = 'multi', default) or loadMcpTools on an
// SDK 1.x Client (argv[3] = 'load'); each tool invoked as a LangChain agent would (tool.invoke).
import { MultiServerMCPClient, loadMcpTools } from '@langchain/mcp-adapters';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { job, run } from './common.mjs';

const headers = { Authorization: `Bearer ${job.key}` };

/** The text of one output block: a string, a content block, or a content block serialized as JSON (as the adapter hands over a text block with structuredContent). */
function blockText(b) {
  if (typeof b !== 'string') return b?.text ?? JSON.stringify(b);
  try {
    const o = JSON.parse(b);
    if (o && typeof o === 'object' && o.type === 'text' && typeof o.text === 'string') return o.text;
  } catch {}
  return b;
}
/** What a LangChain tool hands the model, as text: a string, or content blocks (their text joined). */
const asText = (out) => (Array.isArray(out) ? out.map(blockText).join('\n') : blockText(out));

async function invokeAll(tools) {
  const results = [];
  for (const c of job.calls) {
    const tool = tools.find((t) => t.name === c.name);
    if (!tool) {
      results.push({ name: c.name, missing: true });
      continue;
    }
    try {
      results.push({ name: c.name, text: asText(await tool.invoke(c.arguments)), isError: false });
    } catch (e) {
      // the adapter raises a tool result with isError as a ToolException
      results.push({ name: c.name, text: String(e?.message ?? e), isError: true });
    }
  }
  return results;
}

run(async () => {
  if (process.argv[3] === 'load') {
    const client = new Client({ name: 'langchain-load', version: '1' });
    const opts = { requestInit: { headers } };
    const transport = job.transport === 'sse' ? new SSEClientTransport(new URL(job.url), opts) : new StreamableHTTPClientTransport(new URL(job.url), opts);
    await client.connect(transport);
    const tools = await loadMcpTools('toolgate', client, { throwOnLoadError: true, prefixToolNameWithServerName: false });
    const results = await invokeAll(tools);
    await client.close();
    return { tools: tools.map((t) => t.name), results, elicited: [] };
  }
  const client = new MultiServerMCPClient({
    throwOnLoadError: true,
    prefixToolNameWithServerName: false,
    mcpServers: { toolgate: { transport: job.transport, url: job.url, headers, ...(job.transport === 'http' ? { automaticSSEFallback: false } : {}) } },
  });
  const tools = await client.getTools();
  const results = await invokeAll(tools);
  await client.close();
  return { tools: tools.map((t) => t.name), results, elicited: [] };
});
