import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { BoundCounter, BoundHistogram } from './bound.js';
import { MCP_SERVER_STATES } from '../mcp/types.js';
import type { BackendState } from '../resilience/health.js';

/** What a scrape reads from the gateway's live parts; each owner plugs in its own function. */
export interface MetricSources {
  /** Tools in the registry being served. */
  registry: () => { tools: number; generation: number };
  /** Every backend of every tool in the registry, with its breaker state. */
  breakers: () => Iterable<{ tool: string; backend: string; state: BackendState }>;
  /** Pending confirmations (the confirmation store plugs this in). */
  confirmationsPending: () => number | Promise<number>;
  /** One entry per MCP server (the MCP pool plugs this in). */
  mcpConnections: () => Iterable<{ server: string; state: string; transport?: string; protocolVersion?: string }>;
}

/** Numeric breaker states; ours: `disabled` (a 401/403 took the backend out) 3, `unhealthy` (its probe failed) 4. */
export const BREAKER_VALUE: Readonly<Record<BackendState, number>> = { closed: 0, half_open: 1, open: 2, disabled: 3, unhealthy: 4 };

/** Tool latencies run from a cached builtin (~1 ms) to a slow upstream at its 60 s cap. */
export const CALL_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** The prefilter ranks in-process: sub-millisecond to a few hundred ms on a huge registry. */
export const ROUTE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

/**
 * Every toolgate_ metric (SPEC §5), registered on the registry given (never prom-client's global).
 * Label values come only from the registry (tool, backend), the error catalogue (code) or fixed
 * sets (outcome, result, state): never from a request.
 */
export function defineMetrics(register: Registry, sources: () => MetricSources) {
  const registers = [register];
  return {
    // Updated by every call: bound label sets (metrics/bound.ts), same exposition as prom-client's.
    calls: new BoundCounter({
      name: 'toolgate_tool_calls_total',
      help: 'Finished tool calls by tool, backend that answered (none: refused before one ran) and outcome (ok, error, fallback)',
      labelNames: ['tool', 'backend', 'outcome'] as const,
      registers,
    }),
    callErrors: new Counter({
      name: 'toolgate_tool_call_errors_total',
      help: 'Failed tool calls by tool and error code from the catalogue',
      labelNames: ['tool', 'code'] as const,
      registers,
    }),
    callDuration: new BoundHistogram({
      name: 'toolgate_tool_call_duration_seconds',
      help: 'Whole-call latency (all attempts, fallback included) by tool',
      labelNames: ['tool'] as const,
      buckets: CALL_BUCKETS,
      registers,
    }),
    resultFindings: new Counter({
      name: 'toolgate_result_findings_total',
      help: 'What result guards found in tool results, by tool, kind (secret, email, injection, invisible, link, blocks, webhook…) and action taken (redact, strip, defang, truncate, flag, refuse)',
      labelNames: ['tool', 'kind', 'action'] as const,
      registers,
    }),
    breakerState: new Gauge({
      name: 'toolgate_breaker_state',
      help: 'Breaker state per backend: 0 closed, 1 half-open, 2 open, 3 disabled (credentials refused)',
      labelNames: ['tool', 'backend'] as const,
      registers,
      // Read at scrape time from the registry: one series per live backend, none left by removed ones.
      collect() {
        this.reset();
        for (const b of sources().breakers()) this.set({ tool: b.tool, backend: b.backend }, BREAKER_VALUE[b.state]);
      },
    }),
    breakerTransitions: new Counter({
      name: 'toolgate_breaker_transitions_total',
      help: 'Breaker state changes per backend, by the state entered',
      labelNames: ['tool', 'backend', 'state'] as const,
      registers,
    }),
    confirmationsPending: new Gauge({
      name: 'toolgate_confirmations_pending',
      help: 'Calls waiting for an approver',
      registers,
      async collect() {
        this.set(await sources().confirmationsPending());
      },
    }),
    registryTools: new Gauge({
      name: 'toolgate_registry_tools',
      help: 'Tools in the registry generation being served',
      registers,
      collect() {
        this.set(sources().registry().tools);
      },
    }),
    registryGeneration: new Gauge({
      name: 'toolgate_registry_generation',
      help: 'Generation number of the registry being served (grows by one per reload)',
      registers,
      collect() {
        this.set(sources().registry().generation);
      },
    }),
    reloads: new Counter({
      name: 'toolgate_reloads_total',
      help: 'Reloads of tools.d by result: error when any file had a problem (its last good version kept serving)',
      labelNames: ['result'] as const,
      registers,
    }),
    mcpConnections: new Gauge({
      name: 'toolgate_mcp_connections',
      help: 'MCP servers by connection state: 1 for the state each server is in, 0 for the others',
      labelNames: ['server', 'state'] as const,
      registers,
      collect() {
        this.reset();
        for (const c of sources().mcpConnections()) {
          for (const state of MCP_SERVER_STATES) this.set({ server: c.server, state }, c.state === state ? 1 : 0);
        }
      },
    }),
    mcpServerInfo: new Gauge({
      name: 'toolgate_mcp_server_info',
      help: 'Each declared MCP server (1), its transport and the protocol revision agreed with it ("" while not connected)',
      labelNames: ['server', 'transport', 'protocol_version'] as const,
      registers,
      collect() {
        this.reset();
        for (const c of sources().mcpConnections()) {
          if (c.state === 'closed') continue;
          this.set({ server: c.server, transport: c.transport ?? '', protocol_version: c.protocolVersion ?? '' }, 1);
        }
      },
    }),
    mcpRestarts: new Counter({
      name: 'toolgate_mcp_restarts_total',
      help: 'Reconnects of an MCP server after its session was lost or failed (a stdio child restarted)',
      labelNames: ['server'] as const,
      registers,
    }),
    mcpProtocolErrors: new Counter({
      name: 'toolgate_mcp_protocol_errors_total',
      help: 'Messages to /mcp or /sse refused at the protocol level (bad version, session or envelope, malformed JSON-RPC), by reason',
      labelNames: ['reason'] as const,
      registers,
    }),
    routeDuration: new Histogram({
      name: 'toolgate_route_duration_seconds',
      help: 'Time to rank candidate tools for one POST /v1/route query',
      buckets: ROUTE_BUCKETS,
      registers,
    }),
  };
}

export type MetricSet = ReturnType<typeof defineMetrics>;
