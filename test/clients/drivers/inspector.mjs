// The MCP Inspector's CLI, as a user runs it: one process per method (tools/list, then each
// tools/call), with `--header "Authorization: Bearer …"`. argv[3]: 'v1' (@modelcontextprotocol/inspector-cli
// 1.x) or 'v2' (@modelcontextprotocol/inspector 2.x `--cli`, with `--protocol-era job.era` when given).
import { job, textOf, run } from './common.mjs';
import { cli } from './inspector-cli.mjs';

run(async () => {
  const tools = cli('tools/list').tools.map((t) => t.name);
  const results = job.calls.map((c) => {
    const r = cli('tools/call', ['--tool-name', c.name, '--tool-arg', ...Object.entries(c.arguments).map(([k, v]) => `${k}=${v}`)]);
    return { name: c.name, text: textOf(r), isError: r.isError === true };
  });
  return { tools, results, elicited: [] };
});
