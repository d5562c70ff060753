import { createMcpHandler, InMemoryServerEventBus, type McpHttpHandler, type ServerEventBus } from '@modelcontextprotocol/server';
import type { Caller } from '../auth/caller.js';
import { buildMcpServer, type McpServerDeps } from './server.js';

/** The revision served statelessly (no session, per request). */
export const MODERN_REVISION = '2026-07-28';

/**
 * /mcp for 2026-07-28 ("Modern") requests: the SDK's strict per-request handler
 * (`createMcpHandler(…, { legacy: 'reject' })`), which answers `server/discover`, validates the
 * per-request `_meta` envelope and serves `subscriptions/listen`. Each request gets a fresh server
 * built for its caller (the key was checked before), so per-key visibility holds and any replica
 * can answer any request. List changes go to open listen streams through the event bus: the
 * in-process one, so a stream hears the reloads of the replica that holds it (every replica
 * reloads the same tools.d).
 */
export class ModernMcp {
  private readonly callers = new WeakMap<Request, Caller>();
  private readonly handler: McpHttpHandler;

  constructor(deps: McpServerDeps, onError: (e: Error) => void, bus: ServerEventBus = new InMemoryServerEventBus(onError)) {
    this.handler = createMcpHandler(
      (ctx) => {
        const caller = ctx.requestInfo ? this.callers.get(ctx.requestInfo) : undefined;
        if (!caller) throw new Error('a Modern MCP request reached the SDK without its caller');
        return buildMcpServer(deps, caller, 'modern');
      },
      { legacy: 'reject', bus, onerror: onError },
    );
  }

  /** Serves one Modern request for `caller`; a POST body already parsed is handed over as it is. */
  fetch(request: Request, caller: Caller, parsedBody: unknown): Promise<Response> {
    this.callers.set(request, caller);
    return this.handler.fetch(request, parsedBody !== undefined ? { parsedBody } : undefined);
  }

  /** Tells every open `subscriptions/listen` stream (that asked for it) that the tool list changed. */
  toolsChanged(): void {
    this.handler.notify.toolsChanged();
  }

  /** The listen streams' notifier (resources and prompts list changes, resource updates). */
  get notify(): McpHttpHandler['notify'] {
    return this.handler.notify;
  }

  /** Ends the listen streams and in-flight exchanges (shutdown). */
  close(): Promise<void> {
    return this.handler.close();
  }
}
