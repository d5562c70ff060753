import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Gateway } from '../gateway.js';
import { GatewayError, isGatewayError } from '../errors.js';
import { LearnedFile, MAX_IMPORT_BYTES, type Learner } from '../prefilter/learn/index.js';
import type { LearnedFileT } from '../prefilter/learn/file.js';
import { redisUnavailable } from '../state/redis.js';
import { errorResponses } from './schemas.js';

function learnerOf(gw: Gateway): Learner {
  if (!gw.learner) throw new GatewayError('CONFLICT', 'prefilter.learn is not enabled in the config');
  return gw.learner;
}

/** A store failure of an admin change is 503 (retry), never a 500. */
async function shared<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw isGatewayError(e) ? e : redisUnavailable(e);
  }
}

/** GET/PUT /admin/prefilter/learned (export, import) and DELETE /admin/prefilter/learned/{tool} (reset one tool). */
export async function learnedRoutes(app: FastifyInstance, opts: { gw: Gateway }): Promise<void> {
  const { gw } = opts;
  app.addSchema(LearnedFile);
  app.get(
    '/admin/prefilter/learned',
    {
      config: { role: 'admin' },
      schema: { summary: 'Export the learned term statistics (a file PUT imports)', tags: ['admin'], response: { 200: Type.Ref('LearnedFile'), ...errorResponses(401, 403, 409) } },
    },
    async (_req, reply) => {
      const file = await learnerOf(gw).exportFile();
      reply.header('content-disposition', 'attachment; filename="toolgate-learned.json"');
      return file;
    },
  );
  app.put<{ Body: LearnedFileT }>(
    '/admin/prefilter/learned',
    {
      config: { role: 'admin' },
      bodyLimit: MAX_IMPORT_BYTES,
      schema: {
        summary: 'Import learned term statistics: they replace the current ones (every replica with Redis)',
        tags: ['admin'],
        body: Type.Ref('LearnedFile'),
        response: { 200: Type.Object({ tools: Type.Integer(), terms: Type.Integer() }), ...errorResponses(400, 401, 403, 409, 413, 503) },
      },
    },
    async (req) => {
      const learner = learnerOf(gw);
      await shared(() => learner.importFile(req.body));
      const tools = Object.values(req.body.tools).filter((t) => Object.values(t).some((w) => w > 0));
      return { tools: tools.length, terms: tools.reduce((n, t) => n + Object.values(t).filter((w) => w > 0).length, 0) };
    },
  );
  app.delete<{ Params: { tool: string } }>(
    '/admin/prefilter/learned/:tool',
    {
      config: { role: 'admin' },
      schema: {
        summary: "Forget one tool's learned terms",
        tags: ['admin'],
        params: Type.Object({ tool: Type.String({ minLength: 1, maxLength: 256 }) }),
        response: { 200: Type.Object({ tool: Type.String(), reset: Type.Boolean() }), ...errorResponses(401, 403, 409, 503) },
      },
    },
    async (req) => ({ tool: req.params.tool, reset: await shared(() => learnerOf(gw).reset(req.params.tool)) }),
  );
}
