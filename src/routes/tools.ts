import type { FastifyInstance } from 'fastify';
import type { Static } from '@sinclair/typebox';
import type { Gateway } from '../gateway.js';
import { listable, unlisted } from '../tools/listable.js';
import { hasRole } from '../auth/caller.js';
import { heldError } from '../mcp/held.js';
import { formatTool, type ToolFormat } from '../tools/formats.js';
import { resolveTool } from '../pipeline/resolve.js';
import { ClientWatch } from '../pipeline/client-gone.js';
import { GatewayError } from '../errors.js';
import { mcpBackendServer } from '../mcp/admin-view.js';
import { Type } from '@sinclair/typebox';
import { AcceptedResponse, CallBody, CallResponse, PendingResponse, ToolListQuery, ToolNameParams, errorResponses } from './schemas.js';

/** GET /v1/tools, GET /v1/tools/{name}, POST /v1/tools/{name}/call: thin handlers over the gateway. */
export async function toolRoutes(app: FastifyInstance, opts: { gw: Gateway }): Promise<void> {
  const { gw } = opts;

  app.get<{ Querystring: Static<typeof ToolListQuery> }>(
    '/v1/tools',
    {
      schema: {
        summary: 'Tools visible to the caller, in toolgate form or a provider\'s native form',
        tags: ['tools'],
        querystring: ToolListQuery,
        response: errorResponses(400, 401),
      },
    },
    async (req) => {
      const format = (req.query.format ?? 'toolgate') as ToolFormat;
      const tools = gw.registry.tools.filter((t) => listable(req.caller, t)).map((t) => formatTool(t, format));
      return { format, generation: gw.registry.generation, tools };
    },
  );

  app.get<{ Params: Static<typeof ToolNameParams> }>(
    '/v1/tools/:name',
    {
      schema: {
        summary: 'One tool, with its backends',
        tags: ['tools'],
        params: ToolNameParams,
        response: errorResponses(401, 403, 404),
      },
    },
    async (req) => {
      const tool = resolveTool(gw.registry, req.params.name, req.caller, { lookOnly: true });
      // A poisoned definition reaches no model: only an admin reads it here (and in GET /admin/mcp).
      if (unlisted(tool) && !hasRole(req.caller, 'admin')) throw heldError(tool);
      return {
        ...formatTool(tool, 'toolgate'),
        backends: tool.backends.map((b) => {
          const v = gw.health.view(tool, b);
          return {
            id: b.id,
            kind: b.target.kind,
            weight: b.weight,
            priority: b.priority,
            cost: b.cost,
            state: v.state,
            errorRate: Number(v.errorRate.toFixed(3)),
            latencyMs: v.latencyMs === undefined ? null : Math.round(v.latencyMs),
            ...(v.retryAfterMs !== undefined ? { retryAfterMs: Math.round(v.retryAfterMs) } : {}),
            // An MCP backend names its server's state and agreed revision, and why it is not up (as GET /admin/mcp).
            ...(b.target.kind === 'mcp' ? mcpBackendServer(b.target.server, gw.mcpPool.status(b.target.server)) : {}),
          };
        }),
      };
    },
  );

  app.post<{ Params: Static<typeof ToolNameParams>; Body: Static<typeof CallBody> }>(
    '/v1/tools/:name/call',
    {
      schema: {
        summary: 'Call a tool',
        description: 'Header `Prefer: respond-async` (or the tool\'s `async: true`) answers 202 at once and runs the call in the background; `Idempotency-Key` replays a finished call.',
        tags: ['calls'],
        params: ToolNameParams,
        body: CallBody,
        response: { 200: CallResponse, 202: Type.Union([PendingResponse, AcceptedResponse]), ...errorResponses(400, 401, 403, 404, 409, 413, 422, 429, 502, 503, 504) },
      },
    },
    async (req, reply) => {
      const watch = new ClientWatch(reply.raw); // the client going away cancels the call and its upstream request
      try {
        const out = await gw.pipeline.call({
          toolName: req.params.name,
          args: req.body?.arguments ?? {},
          sessionId: req.body?.sessionId,
          caller: req.caller,
          requestId: req.id,
          idempotencyKey: idempotencyKey(req.headers['idempotency-key']),
          headers: req.headers,
          onClientGone: watch,
          ...(prefersAsync(req.headers.prefer) ? { respond: 'async' as const } : {}),
        });
        if (out.status !== 'ok') reply.code(202).header('location', `/v1/calls/${out.callId}`);
        if (out.status === 'running' && prefersAsync(req.headers.prefer)) reply.header('preference-applied', 'respond-async');
        return out;
      } finally {
        watch.release();
      }
    },
  );
}

const PARAM_SEPARATOR = /[=;]/;

/** RFC 7240 `Prefer: respond-async` (among other preferences). */
function prefersAsync(h: string | string[] | undefined): boolean {
  if (h === undefined) return false;
  const all = Array.isArray(h) ? h.join(',') : h;
  return all.split(',').some((p) => p.split(PARAM_SEPARATOR)[0]?.trim().toLowerCase() === 'respond-async');
}

function idempotencyKey(h: string | string[] | undefined): string | undefined {
  if (h === undefined) return undefined;
  const v = Array.isArray(h) ? h[0] : h;
  if (!v || v.length > 256) throw new GatewayError('BAD_REQUEST', 'Idempotency-Key must be 1 to 256 characters');
  return v;
}
