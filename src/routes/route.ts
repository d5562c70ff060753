import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { Gateway } from '../gateway.js';
import { callerKey } from '../auth/caller.js';
import { formatTool, type ToolFormat } from '../tools/formats.js';
import { rankFor } from '../prefilter/for-caller.js';
import { errorResponses } from './schemas.js';

export const ROUTE_K_MAX = 20;

const Body = Type.Object(
  {
    query: Type.String({ maxLength: 20000, description: 'the user message (any language)' }),
    k: Type.Optional(Type.Integer({ minimum: 1, maximum: ROUTE_K_MAX, default: 5 })),
    format: Type.Optional(Type.Union(['toolgate', 'openai', 'anthropic', 'mcp'].map((f) => Type.Literal(f)))),
    explain: Type.Optional(Type.Boolean()),
    sessionId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: "the agent's session, as its calls name it: with prefilter.learn, the session's next call teaches the ranker" })),
  },
  { additionalProperties: false },
);

/**
 * POST /v1/route: the few tools worth showing the model for a user message, best first. Hidden
 * and held tools and `prefilter: false` tools never appear; a tool whose every backend is open or disabled
 * is demoted below the others, and says why.
 */
export async function routeRoutes(app: FastifyInstance, opts: { gw: Gateway; observe?: (seconds: number) => void }): Promise<void> {
  const { gw } = opts;
  app.post<{ Body: Static<typeof Body> }>(
    '/v1/route',
    { schema: { summary: 'Rank the tools worth showing the model for a user message', tags: ['tools'], body: Body, response: errorResponses(400, 401, 413) } },
    async (req) => {
      const started = performance.now();
      const k = req.body.k ?? 5;
      const learner = gw.learner;
      const ordered = rankFor(gw.registry, gw.health, req.caller, req.body.query, { k, explain: req.body.explain === true, learned: learner?.boost });
      const candidates = ordered.map(({ candidate: c, demoted }) => {
        const learned = c.why && learner ? learner.matched(c.name, req.body.query) : [];
        return {
          name: c.name,
          score: Number(c.score.toFixed(4)),
          ...(c.why || demoted ? { why: { ...(c.why ?? {}), ...(learned.length > 0 ? { learned } : {}), ...(demoted ? { demoted } : {}) } } : {}),
        };
      });
      if (req.body.sessionId !== undefined) gw.searchEvents.onSearch({ source: 'route', sessionTag: req.body.sessionId, callerKey: callerKey(req.caller), query: req.body.query, candidates: candidates.map((c) => c.name) });
      opts.observe?.((performance.now() - started) / 1000);
      const format = req.body.format as ToolFormat | undefined;
      return format ? { candidates, tools: ordered.map((r) => formatTool(r.tool, format)) } : { candidates };
    },
  );
}
