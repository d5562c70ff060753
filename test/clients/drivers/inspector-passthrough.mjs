// The MCP Inspector's CLI for what passes through beside tools: resources/list, resources/read
// (job.passthrough.uri, else the first listed), prompts/list, prompts/get (job.passthrough.prompt with
// job.passthrough.promptArgs). argv[3]: 'v1' (inspector-cli 1.x) or 'v2' (inspector 2.x `--cli`).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { job, run } from './common.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const v1 = process.argv[3] === 'v1';
const bin = v1 ? join(here, '../node_modules/inspector-cli-v1/build/index.js') : join(here, '../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');
const home = mkdtempSync(join(tmpdir(), 'inspector-home-'));
process.on('exit', () => rmSync(home, { recursive: true, force: true }));

function cli(method, extra = []) {
  const args = [bin, ...(v1 ? [] : ['--cli']), job.url, '--transport', job.transport, '--header', `Authorization: Bearer ${job.key}`, '--method', method, ...extra];
  if (!v1) args.push('--format', 'json', ...(job.era ? ['--protocol-era', job.era] : []));
  const r = spawnSync(process.execPath, args, { cwd: here, encoding: 'utf8', timeout: 30_000, env: { ...process.env, HOME: home } });
  let out;
  try {
    out = JSON.parse(r.stdout);
  } catch {
    throw new Error(`inspector ${method} exited ${r.status ?? r.signal}: ${(r.stdout + r.stderr).trim().slice(-1500)}`);
  }
  if (!v1) {
    if (out.error) throw new Error(`inspector ${method}: ${out.error.message ?? JSON.stringify(out.error)}`);
    out = out.result;
  }
  return out;
}

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
