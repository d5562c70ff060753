import type { LoadedConfig } from './config/load.js';
import { KeyTable } from './auth/keys.js';
import { BuiltinAdapter } from './adapters/builtin/index.js';
import { HttpAdapter } from './adapters/http.js';
import type { ToolAdapter } from './adapters/types.js';
import { FileAuditSink } from './audit/file-sink.js';
import { auditRecord } from './audit/record.js';
import type { AuditSink } from './audit/types.js';
import { GatewayError } from './errors.js';
import { CallPipeline, type PipelineDeps } from './pipeline/index.js';
import type { Adapters } from './pipeline/execute.js';
import type { Rng } from './routing/select.js';
import { HealthBook, type BackendState } from './resilience/health.js';
import { MemoryStore } from './state/memory.js';
import type { StateStore } from './state/types.js';
import { loadToolsDir, type LoadContext } from './tools/loader.js';
import { Registry } from './tools/registry.js';
import type { Env } from './util/env.js';
import type { FileProblem } from './util/source.js';

export interface ReloadResult {
  generation: number;
  at: string;
  tools: number;
  added: string[];
  changed: string[];
  removed: string[];
  errors: FileProblem[];
}

export interface GatewayOptions {
  loaded: LoadedConfig;
  env: Env;
  rng?: Rng;
  audit?: AuditSink;
  state?: StateStore;
  onCallEnd?: PipelineDeps['onCallEnd'];
  onBackendState?: (tool: string, backend: string, state: BackendState) => void;
}

/** Until an MCP pool is configured, MCP backends answer UNAVAILABLE. */
const noMcp: ToolAdapter = {
  call: async (req) => {
    const server = req.backend.target.kind === 'mcp' ? req.backend.target.server : '?';
    throw new GatewayError('UNAVAILABLE', `MCP server '${server}' is not connected`, { upstream: { transient: false, noEffect: true } });
  },
};

/** The gateway's long-lived parts: registry snapshot, key table, adapters, audit sink, pipeline. */
export class Gateway {
  registry: Registry = Registry.empty();
  lastReload: ReloadResult | undefined;
  ready = false;
  draining = false;
  readonly keys: KeyTable;
  readonly audit: AuditSink;
  readonly adapters: Adapters;
  readonly pipeline: CallPipeline;
  readonly health: HealthBook;
  readonly state: StateStore;
  readonly secrets: Set<string>;
  private readonly loadCtx: LoadContext;

  constructor(private readonly opts: GatewayOptions) {
    const { config } = opts.loaded;
    this.secrets = opts.loaded.secrets;
    this.keys = new KeyTable(config.auth);
    this.audit = opts.audit ?? new FileAuditSink(config.audit.file ?? 'data/audit.jsonl');
    this.adapters = { http: new HttpAdapter(), builtin: new BuiltinAdapter(), mcp: noMcp };
    this.loadCtx = { dir: config.tools.dir, env: opts.env, secrets: this.secrets, defaults: config.defaults };
    this.health = new HealthBook(opts.onBackendState);
    this.state = opts.state ?? new MemoryStore();
    this.pipeline = new CallPipeline({
      registry: () => this.registry,
      adapters: this.adapters,
      audit: this.audit,
      health: this.health,
      state: this.state,
      limits: config.limits,
      secrets: this.secrets,
      rng: opts.rng ?? Math.random,
      ...(opts.onCallEnd ? { onCallEnd: opts.onCallEnd } : {}),
    });
  }

  get config() {
    return this.opts.loaded.config;
  }

  /** Loads tools.d into a new generation and swaps it in; the change is audited. */
  async reload(): Promise<ReloadResult> {
    const before = this.registry;
    const next = await loadToolsDir(this.loadCtx, before.generation === 0 ? undefined : before);
    this.registry = next;
    this.health.retain(next.tools);
    this.ready = true;
    const old = new Map(before.tools.map((t) => [t.name, t.source.hash]));
    const now = new Map(next.tools.map((t) => [t.name, t.source.hash]));
    const result: ReloadResult = {
      generation: next.generation,
      at: next.loadedAt,
      tools: next.size,
      added: [...now.keys()].filter((n) => !old.has(n)),
      changed: [...now.keys()].filter((n) => old.has(n) && old.get(n) !== now.get(n)),
      removed: [...old.keys()].filter((n) => !now.has(n)),
      errors: [...next.problems],
    };
    this.lastReload = result;
    this.audit.write(auditRecord({ event: 'reload', ...result }));
    return result;
  }

  async close(): Promise<void> {
    this.health.close();
    await Promise.allSettled(Object.values(this.adapters).map((a) => a.close?.()));
    await this.state.close();
    await this.audit.close();
  }
}
