import { mkdtempSync, readFileSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { stringify } from 'yaml';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/load.js';
import { MemoryStore } from '../../src/state/memory.js';
import type { Env } from '../../src/util/env.js';
import type { Rng } from '../../src/routing/select.js';
import type { LookupAll } from '../../src/guards/url.js';

export interface TestGateway {
  app: FastifyInstance;
  dir: string;
  toolsDir: string;
  auditFile: string;
  /** Audit records written so far (flushes first). */
  audit(): Promise<Record<string, unknown>[]>;
  writeTool(file: string, tool: unknown): void;
  call(name: string, args: unknown, opts?: CallOptions): Promise<LightMyRequestResponse>;
  /** Resolves when the named backend reaches the given breaker state. */
  waitForState(tool: string, backend: string, state: string): Promise<void>;
  close(): Promise<void>;
}

export interface CallOptions {
  key?: string;
  headers?: Record<string, string>;
  sessionId?: string;
}

export interface TestGatewayOptions {
  tools?: Record<string, unknown>;
  config?: Record<string, unknown>;
  env?: Env;
  rng?: Rng;
  now?: () => number;
  /** Watch tools.d (default off here: most tests reload explicitly and count reloads). */
  watch?: boolean;
  onBackendState?: (tool: string, backend: string, state: string) => void;
  /** Every MCP message in and out of the gateway's pool. */
  mcpTrace?: (server: string, direction: 'in' | 'out', message: unknown) => void;
  /** The resolver of URL guards and builtin fetch (a real resolver against test/helpers/dns-server.ts). */
  lookup?: LookupAll;
  /** A pino logger (e.g. createLogger with test/helpers/log-lines.ts lineSink); default: none. */
  logger?: Parameters<typeof buildApp>[0]['logger'];
}

/** Two agent keys: `agent-1` sees every tool, `agent-2` only `debug.*` (the tests of who may see and call what). */
export function twoAgents(agent: string, other: string): { keys: { id: string; key: string; roles: string[]; tools?: string[] }[] } {
  return {
    keys: [
      { id: 'agent-1', key: agent, roles: ['agent'] },
      { id: 'agent-2', key: other, roles: ['agent'], tools: ['debug.*'] },
    ],
  };
}

/** A temp dir with config + tools.d, and the app built on it (not listening: use inject). */
export async function startGateway(opts: TestGatewayOptions = {}): Promise<TestGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-test-'));
  const toolsDir = join(dir, 'tools.d');
  mkdirSync(toolsDir);
  const auditFile = join(dir, 'audit.jsonl');
  const writeTool = (file: string, tool: unknown) =>
    writeFileSync(join(toolsDir, file), typeof tool === 'string' ? tool : file.endsWith('.json') ? JSON.stringify(tool) : stringify(tool));
  for (const [file, tool] of Object.entries(opts.tools ?? {})) writeTool(file, tool);
  const configFile = join(dir, 'gateway.yaml');
  writeFileSync(configFile, stringify({ audit: { file: auditFile }, tools: { dir: toolsDir, watch: opts.watch ?? false }, ...opts.config }));
  const env = opts.env ?? {};
  const waiters: { tool: string; backend: string; state: string; resolve: () => void }[] = [];
  const onBackendState = (tool: string, backend: string, state: string) => {
    opts.onBackendState?.(tool, backend, state);
    for (const w of waiters.splice(0)) {
      if (w.tool === tool && w.backend === backend && w.state === state) w.resolve();
      else waiters.push(w);
    }
  };
  const loaded = loadConfig({ file: configFile, env });
  const app = await buildApp({
    loaded,
    env,
    logger: opts.logger ?? false,
    ...(opts.rng ? { rng: opts.rng } : {}),
    // One injected clock for confirmations, the state store's expiry and the result cache.
    ...(opts.now ? { now: opts.now, state: new MemoryStore(opts.now) } : {}),
    onBackendState,
    ...(opts.mcpTrace ? { mcpTrace: opts.mcpTrace } : {}),
    ...(opts.lookup ? { lookup: opts.lookup } : {}),
  });
  await app.gw.mcp.settled(); // MCP servers of tools.d are imported in the background
  return {
    app,
    dir,
    toolsDir,
    auditFile,
    writeTool,
    async audit() {
      await app.gw.audit.flush();
      if (!existsSync(auditFile)) return [];
      return readFileSync(auditFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    call(name, args, o = {}) {
      return app.inject({
        method: 'POST',
        url: `/v1/tools/${encodeURIComponent(name)}/call`,
        headers: { ...(o.key ? { authorization: `Bearer ${o.key}` } : {}), ...o.headers },
        payload: { arguments: args, ...(o.sessionId ? { sessionId: o.sessionId } : {}) },
      });
    },
    waitForState: (tool, backend, state) => new Promise((resolve) => waiters.push({ tool, backend, state, resolve })),
    close: () => app.close(),
  };
}

export function echoTool(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, description: `echo tool ${name}`, sideEffect: 'none', backends: [{ id: 'b', builtin: 'echo' }], ...extra };
}

export function httpTool(name: string, url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, description: `http tool ${name}`, sideEffect: 'read', backends: [{ id: 'up', http: { url } }], ...extra };
}
