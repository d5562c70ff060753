import type { Static } from '@sinclair/typebox';
import type { McpAdminView } from '../routes/schemas.js';
import type { McpCondition, McpServerStatus } from './types.js';

/** The operator's name for a server's state (idle, lazy and not yet needed, counts as connecting). */
export function conditionOf(status: McpServerStatus): McpCondition {
  if (status.state === 'ready') return 'up';
  if (status.state === 'restarting') return status.failed ? 'failed' : 'backoff';
  return 'connecting';
}

/** GET /admin/mcp from the pool's snapshots; `tools` counts the tools each server serves in the registry, `held` those held. */
export function mcpAdminView(
  statuses: readonly McpServerStatus[],
  toolsOf: (server: string) => number,
  heldOf: (server: string) => Static<typeof McpAdminView>['servers'][number]['held'] = () => [],
): Static<typeof McpAdminView> {
  return {
    servers: statuses
      .filter((s) => s.state !== 'closed')
      .map((s) => ({
        name: s.server,
        transport: s.transport,
        state: conditionOf(s),
        protocolVersion: s.protocolVersion ?? null,
        tools: toolsOf(s.server),
        restarts: s.restarts,
        lastError: s.lastError ?? null,
        nextRetryAt: s.nextRetryAt === undefined ? null : new Date(s.nextRetryAt).toISOString(),
        held: heldOf(s.server),
      })),
  };
}

/** What a tool's MCP backend says about its server (GET /v1/tools/{name}; the console shows it): the admin view's words. */
export interface McpBackendServer {
  server: string;
  serverState: McpCondition | 'undeclared';
  protocolVersion: string | null;
  lastError: string | null;
}

export function mcpBackendServer(server: string, status: McpServerStatus | undefined): McpBackendServer {
  if (!status || status.state === 'closed') {
    return { server, serverState: 'undeclared', protocolVersion: null, lastError: `no MCP server named '${server}' is declared in tools.d` };
  }
  return { server, serverState: conditionOf(status), protocolVersion: status.protocolVersion ?? null, lastError: status.lastError ?? null };
}
