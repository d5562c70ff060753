import type { CompiledBackend, CompiledProbe, CompiledTool } from '../tools/types.js';
import type { HealthBook } from './health.js';

/** How a probe reaches an MCP server (the pool's ping). */
export type McpPinger = (server: string, deadline: number) => Promise<void>;

interface Running {
  readonly timer: NodeJS.Timeout;
  successes: number;
  failures: number;
  healthy: boolean;
  busy: boolean;
}

/** A probe never waits longer than this (an MCP ping may have to connect first); probes never overlap. */
const PROBE_TIMEOUT_MS = 5000;

/**
 * Active health checks: one unref'd interval per backend that declares a `probe`. N consecutive
 * failures take the backend out of routing (HealthBook `unhealthy`), M consecutive successes put
 * it back. `sync` follows each registry generation: probes of changed or removed backends stop.
 */
export class Prober {
  private readonly running = new Map<string, Running>();

  constructor(
    private readonly health: HealthBook,
    private readonly ping: McpPinger,
  ) {}

  sync(tools: readonly CompiledTool[]): void {
    const live = new Map<string, { tool: CompiledTool; backend: CompiledBackend; probe: CompiledProbe }>();
    for (const tool of tools) {
      for (const backend of tool.backends) {
        if (backend.probe) live.set(`${tool.name}\u0000${backend.id}\u0000${backend.hash}`, { tool, backend, probe: backend.probe });
      }
    }
    for (const [key, r] of this.running) {
      if (live.has(key)) continue;
      clearInterval(r.timer);
      this.running.delete(key);
    }
    for (const [key, { tool, backend, probe }] of live) {
      if (this.running.has(key)) continue;
      const timer = setInterval(() => void this.tick(tool, backend, probe, key), probe.intervalMs);
      timer.unref();
      this.running.set(key, { timer, successes: 0, failures: 0, healthy: true, busy: false });
    }
  }

  close(): void {
    for (const r of this.running.values()) clearInterval(r.timer);
    this.running.clear();
  }

  private async tick(tool: CompiledTool, backend: CompiledBackend, probe: CompiledProbe, key: string): Promise<void> {
    const r = this.running.get(key);
    if (!r || r.busy) return; // a slow probe is not stacked
    r.busy = true;
    const ok = await this.check(probe);
    r.busy = false;
    if (this.running.get(key) !== r) return; // stopped meanwhile (reload, close)
    if (ok) {
      r.failures = 0;
      r.successes++;
      if (!r.healthy && r.successes >= probe.healthyAfter) r.healthy = true;
    } else {
      r.successes = 0;
      r.failures++;
      if (r.healthy && r.failures >= probe.unhealthyAfter) r.healthy = false;
    }
    this.health.setProbeHealth(tool, backend, r.healthy);
  }

  private async check(probe: CompiledProbe): Promise<boolean> {
    const timeoutMs = PROBE_TIMEOUT_MS;
    try {
      if (probe.check.kind === 'mcp') {
        await this.ping(probe.check.server, Date.now() + timeoutMs);
        return true;
      }
      const res = await fetch(probe.check.url, { redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
      await res.body?.cancel();
      const want = probe.check.expectStatus;
      return want === undefined ? res.status >= 200 && res.status < 300 : res.status === want;
    } catch {
      return false;
    }
  }
}
