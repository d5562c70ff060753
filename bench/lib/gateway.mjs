// Runs the compiled gateway (dist/server.js) as a child process on a temporary config, tools.d and
// audit file, with one API key. Used by bench/http-overhead.mjs and bench/memory.mjs.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { request } from 'undici';
import { delay, freePort, spawnNode, stop } from './proc.mjs';

export const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The tool file of the HTTP and pipeline benches: `bench.echo`, arguments { message, count } under
 * a strict input schema, served by the backend given as YAML (the lines under `backends:`).
 */
export function benchEchoTool(description, backendYaml) {
  return `name: bench.echo
description: ${description}
inputSchema:
  type: object
  required: [message]
  additionalProperties: false
  properties:
    message: { type: string, maxLength: 200 }
    count: { type: integer, minimum: 0, maximum: 100 }
sideEffect: read
backends:
${backendYaml}`;
}

/**
 * The server file of the MCP benches: server-everything (at `everything`, its dist/index.js) over
 * stdio, started with the gateway, only its `echo` imported, as a read that needs no confirmation.
 */
export function everythingServerFile(everything) {
  return `kind: mcp-server
name: everything
transport: stdio
command: ${JSON.stringify(process.execPath)}
args: [${JSON.stringify(everything)}, stdio]
prestart: true
include: [echo]
overrides: { echo: { sideEffect: read, confirm: false } }
`;
}

export function requireDist() {
  if (!existsSync(join(root, 'dist/server.js'))) {
    console.error('No compiled gateway in dist/: run `npm run build` first.');
    process.exit(2);
  }
}

/**
 * A temporary directory with tools.d/ filled by `files` ({ 'name.yaml': text }), gateway.yaml and an
 * audit file. `audit` adds lines to the audit section, `extra` top-level YAML after the config.
 * Returns { dir, toolsDir, configFile, auditFile, key, cleanup() }.
 */
export function makeGatewayDir(files = {}, { audit = '', extra = '' } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-'));
  const toolsDir = join(dir, 'tools.d');
  mkdirSync(toolsDir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(toolsDir, name), text);
  const key = randomBytes(24).toString('hex');
  const auditFile = join(dir, 'audit.jsonl');
  const configFile = join(dir, 'gateway.yaml');
  writeFileSync(
    configFile,
    `auth:
  keys:
    - id: bench
      key: "${key}"
audit:
  file: "${auditFile}"
${audit}tools:
  dir: "${toolsDir}"
  watch: false
${extra}`,
  );
  return { dir, toolsDir, configFile, auditFile, key, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The node arguments and environment that load bench/lib/pipeline-bypass.mjs into a gateway built in
 * `distDir`: the floor of the benchmarks, a measuring aid (the call pipeline bypassed).
 */
export function pipelineBypass(distDir = join(root, 'dist')) {
  return { nodeArgs: ['--import', pathToFileURL(join(root, 'bench/lib/pipeline-bypass.mjs')).href], env: { TOOLGATE_BENCH_DIST: distDir } };
}

/**
 * Starts `node [nodeArgs] dist/server.js` on a free port and waits for /readyz (bounded).
 * Returns the process handle with port, url, key and stop().
 */
export async function startGateway(gdir, { nodeArgs = [], env = {}, timeoutMs = 60_000, onLine } = {}) {
  const port = await freePort();
  const h = spawnNode([...nodeArgs, join(root, 'dist/server.js')], {
    env: { ...env, TOOLGATE_CONFIG: gdir.configFile, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    onLine,
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (h.child.exitCode !== null) throw new Error(`gateway exited with ${h.child.exitCode}:\n${h.output()}`);
    if (Date.now() > deadline) {
      await stop(h, 2000);
      throw new Error(`gateway not ready in ${timeoutMs} ms:\n${h.output()}`);
    }
    try {
      const res = await request(`${url}/readyz`, { headersTimeout: 2000, bodyTimeout: 2000 });
      await res.body.dump();
      if (res.statusCode === 200) break;
    } catch {}
    await delay(100);
  }
  return { ...h, port, url, key: gdir.key, stop: () => stop(h) };
}
