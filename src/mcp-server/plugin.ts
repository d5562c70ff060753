import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Gateway } from '../gateway.js';
import { requireCaller } from '../plugins/auth.js';
import { requireScopes } from '../plugins/scopes.js';
import { errorResponses } from '../routes/schemas.js';
import type { OnSearch } from '../prefilter/search-events.js';
import { MESSAGES_PATH, SSE_PATH } from './paths.js';

export interface McpRouteOptions {
  gw: Gateway;
  onSearch?: OnSearch;
}

/** What the routes hand their requests to (handlers.ts). */
export interface McpHandlers {
  mcp(req: FastifyRequest, reply: FastifyReply): Promise<unknown>;
  sseOpen(req: FastifyRequest, reply: FastifyReply): Promise<unknown>;
  sseMessage(req: FastifyRequest, reply: FastifyReply): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * /mcp: toolgate as an MCP server over Streamable HTTP, both eras (2026-07-28 per request, 2025
 * with sessions), and /sse. Origin and Host are checked before the key by the app's origin policy
 * (strict here: a foreign Origin is 403 on GET too), then the key as for REST (401), for every
 * era; each 2025 session is bound to its caller.
 */
export async function mcpServerRoutes(app: FastifyInstance, opts: McpRouteOptions): Promise<void> {
  // The MCP server SDK and the session machinery load on the first request (measured at import of dist/app.js: ≈ 4 MiB heap, up to 8 MiB RSS).
  let loading: Promise<McpHandlers> | undefined;
  const handlers = () => (loading ??= import('./handlers.js').then((m) => m.mcpHandlers(app, opts)));

  requireCaller(app, opts.gw.auth);
  requireScopes(app, opts.gw.resource);

  // The SDK reads the body itself: malformed JSON and wrong media types get its JSON-RPC answers.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  app.addHook('preClose', async () => {
    if (loading) await (await loading).close();
  });

  // Clients that speak only the legacy SSE transport: GET /sse, POST /messages (any 2024/2025
  // revision the SDK knows: clients negotiate over this transport as they do over stdio).
  app.get(SSE_PATH, { exposeHeadRoute: false, config: { origin: 'strict' }, schema: { summary: 'MCP over the legacy SSE transport: opens a session stream (its first event, `endpoint`, is the URL to POST messages to)', tags: ['mcp'] } }, async (req, reply) => (await handlers()).sseOpen(req, reply));
  app.post(MESSAGES_PATH, { config: { origin: 'strict' }, schema: { summary: 'MCP over the legacy SSE transport: one client message for the session named by `sessionId` (202; replies go to its stream)', tags: ['mcp'] } }, async (req, reply) => (await handlers()).sseMessage(req, reply));

  app.route({
    method: ['GET', 'POST', 'DELETE'],
    url: '/mcp',
    config: { origin: 'strict' }, // the transport spec: Origin checked on every connection
    exposeHeadRoute: false, // HEAD is no MCP method: 404 as for any other (Fastify's HEAD cannot send the SDK's Response)
    schema: {
      summary: 'toolgate as an MCP server (Streamable HTTP): revision 2026-07-28 per request (server/discover, subscriptions/listen), 2025-11-25/06-18/03-26 with sessions; tools/list and tools/call for the caller\'s tools',
      tags: ['mcp'],
      response: errorResponses(401, 403),
    },
    handler: async (req, reply) => (await handlers()).mcp(req, reply),
  });
}
