import type { StartGate } from './pool-start.js';
import type { PassthroughEvent } from './passthrough.js';
import type { Cancel } from '../util/cancel.js';
import type { Implementation, Progress } from '@modelcontextprotocol/client';
import type { BackoffSettings } from './backoff.js';
import type { McpTraceFn } from './guarded-transport.js';
import type { UpstreamTokens } from '../auth/upstream/index.js';
import type { CallClientRequests, ServerRequestEvent } from './server-requests.js';

/**
 * Lifecycle of one server's connection: `idle` (lazy, not yet needed), `connecting` (first
 * attempt), `ready`, `restarting` (lost or failed, reconnecting with backoff), `closed`
 * (removed or pool closed; final).
 */
export type McpServerState = 'idle' | 'connecting' | 'ready' | 'restarting' | 'closed';

/** Every state a server can be in, for metrics that publish a gauge per state. */
export const MCP_SERVER_STATES: readonly McpServerState[] = ['idle', 'connecting', 'ready', 'restarting', 'closed'];

/** Emitted on each state change (feeds `toolgate_mcp_connections{server,state}` and /readyz). */
export interface McpStateChange {
  server: string;
  state: McpServerState;
  previous: McpServerState;
  /** Why, when leaving `ready` or failing to connect. */
  reason?: string;
}

/** Emitted when a new session attempt starts after a lost or failed one. */
export interface McpRestart {
  server: string;
  /** Total restarts of this server so far, this one included. */
  restarts: number;
  reason: string;
}

/** Events of McpPool. */
export interface McpPoolEventMap {
  state: [McpStateChange];
  restart: [McpRestart];
  /** `notifications/tools/list_changed`, or a new session after a restart (tools may differ). */
  toolsChanged: [{ server: string }];
  condition: [McpConditionChange];
  /** A resources, prompts or logging notification of a server (src/mcp/passthrough.ts). */
  passthrough: [PassthroughEvent];
}

/** A snapshot of one server, for /readyz, admin views and tests. */
export interface McpServerStatus {
  server: string;
  transport: 'stdio' | 'streamable-http' | 'sse';
  state: McpServerState;
  prestart: boolean;
  restarts: number;
  inFlight: number;
  queued: number;
  /** Pid (= process group id) of a stdio server's current process. */
  pid?: number;
  /** Mcp-Session-Id of a Streamable HTTP session. */
  sessionId?: string;
  lastError?: string;
  /** The revision agreed (in `initialize`, or from `server/discover`), while a session is up. */
  protocolVersion?: string;
  /** Its era while up: 'modern' (2026-07-28 and later) or 'legacy' (initialize). */
  era?: 'modern' | 'legacy';
  /** Epoch ms of the next connect attempt while one is scheduled. */
  nextRetryAt?: number;
  /** The last attempt failed in a way retrying soon cannot fix (protocol versions): retried slowly. */
  failed: boolean;
}

/**
 * How an operator sees a server (GET /admin/mcp, warn logs): `connecting` (first attempt, or lazy
 * and not yet needed), `up`, `backoff` (lost or failed, retrying with backoff), `failed` (cannot
 * succeed as configured, e.g. no common protocol version: retried slowly).
 */
export type McpCondition = 'connecting' | 'up' | 'backoff' | 'failed';

/** Emitted once per change of condition (not per retry), with the cause when not up. */
export interface McpConditionChange {
  server: string;
  condition: McpCondition;
  previous: McpCondition;
  lastError?: string;
}

/** Per-call options. */
export interface McpCallOptions {
  /** Epoch ms by which the whole call (queueing and reconnect waits included) must end. */
  deadline: number;
  /** Aborting sends `notifications/cancelled` to the server and rejects with `aborted`. */
  cancel?: Cancel;
  /** Progress notifications of this call; never called after the call settled or its deadline. */
  onProgress?: (progress: Progress) => void;
  /** Sent as the request's `params._meta` (W3C trace context: `traceparent`, `tracestate`). */
  meta?: Readonly<Record<string, string>>;
  /** Who answers the server's sampling, elicitation and roots requests made while this call runs (none: refused). */
  clientRequests?: CallClientRequests | undefined;
}

/** Pool-wide settings (per-server ones come from the server file). */
export interface McpPoolOptions {
  clientInfo?: Implementation;
  /** Bound of one connect + initialize handshake. Default 30000. */
  connectTimeoutMs?: number;
  /** Bound of one ping; two failed pings in a row restart the session. Default 5000. */
  pingTimeoutMs?: number;
  /** Deadline of listTools() when none is given. Default 30000. */
  listTimeoutMs?: number;
  backoff?: Partial<BackoffSettings>;
  /** Delay between attempts of a server in `failed` (no common protocol version). Default 60000. */
  failedRetryMs?: number;
  /** SIGTERM → SIGKILL grace for a stdio server's process group. Default 2000. */
  killGraceMs?: number;
  /** How much of a stdio server's stderr to keep for error messages. Default 8192. */
  stderrTailBytes?: number;
  /** Sees every JSON-RPC message (debug logging, tests). */
  trace?: (server: string, ...rest: Parameters<McpTraceFn>) => void;
  /** Secret values (a live set): a server's stderr quoted in an error is masked before it is cut. */
  secrets?: ReadonlySet<string>;
  /** Tokens of servers with `credentials` (shared with the HTTP adapter; its owner closes it). Default: one of the pool's own. */
  upstreamTokens?: UpstreamTokens;
  /** Hears the servers' resources, prompts and logging notifications (the pool sets it: `passthrough` events). */
  onPassthrough?: (e: PassthroughEvent) => void;
  /** Told of every server request (sampling, elicitation, roots), relayed or refused: the audit record. */
  onServerRequest?: (event: ServerRequestEvent) => void;
  /** Servers connecting at once (spawn + handshake; first connects and restarts alike). Default 8. */
  startConcurrency?: number;
}

/** McpPoolOptions with every default applied. */
export type ResolvedPoolOptions = Required<Omit<McpPoolOptions, 'backoff' | 'trace' | 'onPassthrough' | 'onServerRequest' | 'startConcurrency'>> &
  Pick<McpPoolOptions, 'trace' | 'onPassthrough' | 'onServerRequest'> & { backoff: BackoffSettings; startGate: StartGate };
