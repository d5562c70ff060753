import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';

/** A free TCP port on 127.0.0.1 (asked of the kernel, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      s.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  dir: string;
  auditFile: string;
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
  output(): string;
}

export interface ServerFiles {
  dir?: string;
  config: Record<string, unknown>;
  tools: Record<string, unknown>;
  env?: Record<string, string>;
  /** How long to wait for /readyz (default 10 s; a test starting several processes on a loaded machine may need more). */
  readyTimeoutMs?: number;
}

/**
 * Starts the built gateway (`node dist/server.js`, which `npm test` builds first) as a child
 * process on a free port, with its own config and tools.d in a temp dir; resolves once /readyz is 200.
 */
export async function startServerProcess(files: ServerFiles): Promise<ServerProcess> {
  if (!existsSync('dist/server.js')) throw new Error('dist/server.js is missing: run `npm run build` (npm test does)');
  const dir = files.dir ?? mkdtempSync(join(tmpdir(), 'toolgate-proc-'));
  const toolsDir = join(dir, 'tools.d');
  mkdirSync(toolsDir, { recursive: true });
  for (const [name, tool] of Object.entries(files.tools)) writeFileSync(join(toolsDir, name), stringify(tool));
  const auditFile = join(dir, 'audit.jsonl');
  const configFile = join(dir, 'gateway.yaml');
  writeFileSync(configFile, stringify({ audit: { file: auditFile }, tools: { dir: toolsDir }, ...files.config }));
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/server.js'], {
    env: { ...process.env, ...files.env, TOOLGATE_CONFIG: configFile, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < (files.readyTimeoutMs ?? 30_000) / 50; i++) { // 30 s by default: prestarted MCP servers on a loaded machine
    const ok = await fetch(`${url}/readyz`).then((r) => r.ok, () => false);
    if (ok) return { url, child, dir, auditFile, exited, output: () => out };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`the gateway did not become ready:\n${out}`);
}
