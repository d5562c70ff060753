// The MCP Inspector's CLI for what passes through beside tools: resources/list, resources/read
// (job.passthrough.uri, else the first listed), prompts/list, prompts/get (job.passthrough.prompt with
// job.passthrough.promptArgs). argv[3]: 'v1' (inspector-cli 1.x) or 'v2' (inspector 2.x `--cli`).
import { job, run } from './common.mjs';
import { cli } from './inspector-cli.mjs';

run(async () => {
  const p = job.passthrough ?? {};
  const resources = cli('resources/list').resources.map((r) => r.uri);
  const uri = p.uri ?? resources[0];
  const read = uri ? cli('resources/read', ['--uri', uri]).contents : [];
  const prompts = cli('prompts/list').prompts.map((x) => x.name);
  const args = Object.entries(p.promptArgs ?? {}).map(([k, v]) => `${k}=${v}`);
  const got = p.prompt ? cli('prompts/get', ['--prompt-name', p.prompt, ...(args.length ? ['--prompt-args', ...args] : [])]) : undefined;
  return { tools: [], results: [], elicited: [], passthrough: { resources, read, prompts, messages: got?.messages ?? [] } };
});
