// The AI SDK MCP client (`@ai-sdk/mcp` createMCPClient), 2.x or 1.x (argv[3] = 'v1'): the tools an
// agent gets from client.tools(), each called through its `execute` as generateText would.
import { job, textOf, elicitAnswer, run } from './common.mjs';

const mod = process.argv[3] === 'v1' ? await import('ai-sdk-mcp-v1') : await import('@ai-sdk/mcp');

run(async () => {
  const elicited = [];
  const client = await mod.createMCPClient({
    transport: { type: job.transport, url: job.url, headers: { Authorization: `Bearer ${job.key}` } },
    capabilities: job.elicit ? { elicitation: {} } : {},
  });
  if (job.elicit) {
    client.onElicitationRequest(mod.ElicitationRequestSchema, async (req) => {
      elicited.push(req.params.message);
      return elicitAnswer();
    });
  }
  const tools = await client.tools();
  const results = [];
  for (const c of job.calls) {
    const tool = tools[c.name];
    if (!tool) {
      results.push({ name: c.name, missing: true });
      continue;
    }
    const r = await tool.execute(c.arguments, { toolCallId: `call-${results.length}`, messages: [] });
    results.push({ name: c.name, text: textOf(r), isError: r.isError === true });
  }
  const protocolVersion = client.initializeResult?.protocolVersion;
  await client.close();
  return { tools: Object.keys(tools), results, elicited, protocolVersion };
});
