// The MCP Inspector's CLI as the drivers run it (inspector.mjs, inspector-passthrough.mjs): one
// process per method, with `--header "Authorization: Bearer …"`. argv[3]: 'v1'
// (@modelcontextprotocol/inspector-cli 1.x) or 'v2' (@modelcontextprotocol/inspector 2.x `--cli`,
// with `--protocol-era job.era` when given).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { job } from './common.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const v1 = process.argv[3] === 'v1';
const bin = v1 ? join(here, '../node_modules/inspector-cli-v1/build/index.js') : join(here, '../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');
// Inspector 2.x keeps a catalog and client config under $HOME: a fresh one, away from the user's.
const home = mkdtempSync(join(tmpdir(), 'inspector-home-'));
process.on('exit', () => rmSync(home, { recursive: true, force: true }));

/** One Inspector CLI process for one method; its JSON result (2.x: the `result` of its JSON output). */
export function cli(method, extra = []) {
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
