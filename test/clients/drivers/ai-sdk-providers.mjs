// The AI SDK as an agent builds it: /mcp's tools from `@ai-sdk/mcp` createMCPClient, handed to
// generateText with the OpenAI (Chat Completions) and the Anthropic (Messages) provider. No
// network: each provider's `fetch` keeps the request body it was given and answers a canned
// completion that calls the first listed tool by the name it was shown, so the SDK runs that
// call through /mcp as an agent's would. The report carries both captured request bodies.
import { generateText } from 'ai';
import { createMCPClient } from '@ai-sdk/mcp';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { job, run } from './common.mjs';

const reply = (body) => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });

/** A provider fetch: captures the body, answers with a call of the first tool the body lists. */
function capture(into, answer) {
  return async (_url, init) => {
    const body = JSON.parse(String(init?.body ?? '{}'));
    into.push(body);
    return reply(answer(body));
  };
}

const openaiAnswer = (body) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 0,
  model: body.model,
  choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: body.tools[0].function.name, arguments: JSON.stringify(job.arguments ?? {}) } }] } }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

const anthropicAnswer = (body) => ({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: body.model,
  content: [{ type: 'tool_use', id: 'toolu_1', name: body.tools[0].name, input: job.arguments ?? {} }],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: { input_tokens: 1, output_tokens: 1 },
});

run(async () => {
  const client = await createMCPClient({ transport: { type: job.transport, url: job.url, headers: { Authorization: `Bearer ${job.key}` } } });
  const tools = await client.tools();
  const requests = { openai: [], anthropic: [] };
  const openai = createOpenAI({ apiKey: 'sk-test', fetch: capture(requests.openai, openaiAnswer) });
  const anthropic = createAnthropic({ apiKey: 'sk-ant-test', fetch: capture(requests.anthropic, anthropicAnswer) });
  const results = [];
  for (const [provider, model] of [['openai', openai.chat('gpt-4o')], ['anthropic', anthropic('claude-sonnet-4-5')]]) {
    const r = await generateText({ model, tools, prompt: 'Use the first tool.' });
    for (const tr of r.toolResults) results.push({ name: `${provider}:${tr.toolName}`, text: (tr.output?.content ?? []).map((c) => c.text ?? '').join('\n'), isError: tr.output?.isError === true });
    for (const c of r.content) if (c.type === 'tool-error') results.push({ name: `${provider}:${c.toolName}`, text: String(c.error), isError: true });
  }
  await client.close();
  return { tools: Object.keys(tools), results, elicited: [], requests: { openai: requests.openai[0], anthropic: requests.anthropic[0] } };
});
