import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { Gateway } from '../gateway.js';
import { callerKey, canSee } from '../auth/caller.js';
import { formatTool, type ToolFormat } from '../tools/formats.js';
import { indexFor } from '../prefilter/registry-index.js';
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
 * tools and `prefilter: false` tools never appear; a tool whose every backend is open or disabled
 * is demoted below the others, and says why.
 */
export async function routeRoutes(app: FastifyInstance, opts: { gw: Gateway; observe?: (seconds: number) => void }): Promise<void> {
  const { gw } = opts;
  app.post<{ Body: Static<typeof Body> }>(
    '/v1/route',
    { schema: { summary: 'Rank the tools worth showing the model for a user message', tags: ['tools'], body: Body, response: errorResponses(400, 401, 413) } },
    async (req) => {
      const started = performance.now();
      const registry = gw.registry;
      const k = req.body.k ?? 5;
      const eligible = (name: string) => {
        const t = registry.get(name);
        return t !== undefined && t.visibility.prefilter && !t.deprecated && canSee(req.caller, t);
      };
      const learner = gw.learner;
      const found = indexFor(registry).search(req.body.query, { k: k + ROUTE_K_MAX, filter: eligible, explain: req.body.explain === true, ...(learner ? { learned: learner.boost } : {}) });
      const ranked = found.map((c) => {
        const tool = registry.get(c.name)!;
        const states = tool.backends.map((b) => gw.health.view(tool, b).state);
        const down = states.every((s) => s === 'open' || s === 'disabled' || s === 'unhealthy');
        return { c, tool, down, why: down ? `every backend is ${[...new Set(states)].join(' or ')}` : undefined };
      });
      const ordered = [...ranked.filter((r) => !r.down), ...ranked.filter((r) => r.down)].slice(0, k);
      const candidates = ordered.map(({ c, why }) => {
        const learned = c.why && learner ? learner.matched(c.name, req.body.query) : [];
        return {
          name: c.name,
          score: Number(c.score.toFixed(4)),
          ...(c.why || why ? { why: { ...(c.why ?? {}), ...(learned.length > 0 ? { learned } : {}), ...(why ? { demoted: why } : {}) } } : {}),
        };
      });
      if (req.body.sessionId !== undefined) gw.searchEvents.onSearch({ sessionTag: req.body.sessionId, callerKey: callerKey(req.caller), query: req.body.query, candidates: candidates.map((c) => c.name) });
      opts.observe?.((performance.now() - started) / 1000);
      const format = req.body.format as ToolFormat | undefined;
      return format ? { candidates, tools: ordered.map((r) => formatTool(r.tool, format)) } : { candidates };
    },
  );
}
