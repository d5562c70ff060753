// The MCP Inspector's CLI, as a user runs it: one process per method (tools/list, then each
// tools/call), with `--header "Authorization: Bearer …"`. argv[3]: 'v1' (@modelcontextprotocol/inspector-cli
// 1.x) or 'v2' (@modelcontextprotocol/inspector 2.x `--cli`, with `--protocol-era job.era` when given).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { job, textOf, run } from './common.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const v1 = process.argv[3] === 'v1';
const bin = v1 ? join(here, '../node_modules/inspector-cli-v1/build/index.js') : join(here, '../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');
// Inspector 2.x keeps a catalog and client config under $HOME: a fresh one, away from the user's.
const home = mkdtempSync(join(tmpdir(), 'inspector-home-'));
process.on('exit', () => rmSync(home, { recursive: true, force: true }));

function cli(method, extra = []) {
  const args = [bin, ...(v1 ? [] : ['--cli']), job.url, '--transport', job.transport, '--header', `Authorization: Bearer ${job.key}`, '--method', method, ...extra];
  if (!v1) args.push('--format', 'json', ...(job.era ? ['--protocol-era', job.era] : []));
  // 1.x looks for its package.json by a path relative to the working directory (../package.json,
  // else ../../package.json) but imports it relative to its module: run it where ../package.json exists.
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
  const tools = cli('tools/list').tools.map((t) => t.name);
  const results = job.calls.map((c) => {
    const r = cli('tools/call', ['--tool-name', c.name, '--tool-arg', ...Object.entries(c.arguments).map(([k, v]) => `${k}=${v}`)]);
    return { name: c.name, text: textOf(r), isError: r.isError === true };
  });
  return { tools, results, elicited: [] };
});
