import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { Gateway } from '../gateway.js';
import { GatewayError } from '../errors.js';
import { withoutLease, type CallRecord } from '../calls/records.js';
import { streamCallEvents } from './call-events.js';
import { errorResponses } from './schemas.js';
import { madeBy } from '../auth/caller.js';

const Params = Type.Object({ callId: Type.String({ minLength: 1, maxLength: 128 }) });
const PageQuery = Type.Object({
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1048576, default: 16384, description: 'bytes' })),
});
type P = { Params: Static<typeof Params> };

/**
 * The caller that made a call reads it (its record, events, kept result); admins read any. An
 * approver decides from the confirmation and gets the approved call's result from its approval:
 * another caller's calls are not its to read.
 */
function mayRead(req: FastifyRequest, made: { caller: string; issuer?: string | undefined; subject?: string | undefined }): boolean {
  return madeBy(made, req.caller) || req.caller.roles.has('admin');
}

/**
 * GET /v1/calls/{callId} (a gated or long-running call from its start to its result), its events
 * (SSE), DELETE to cancel a running one, and /result to page through a large result.
 */
export async function callRoutes(app: FastifyInstance, opts: { gw: Gateway }): Promise<void> {
  const { gw } = opts;
  const tags = ['calls'];

  /** The record as its reader should see it, or NOT_FOUND (also for one the caller may not read). */
  async function readable(req: FastifyRequest, callId: string): Promise<CallRecord> {
    const rec = await gw.calls.get(callId);
    if (!rec || !mayRead(req, rec)) throw new GatewayError('NOT_FOUND', `no call '${callId}'`);
    if (rec.status === 'pending_confirmation' && rec.confirmationId) {
      const conf = await gw.confirmations.get(rec.confirmationId);
      if (conf?.status === 'expired') return { ...rec, status: 'expired' };
      if (conf?.status === 'rejected') return { ...rec, status: 'rejected', ...(conf.approver ? { approver: conf.approver } : {}) };
    }
    return gw.background.settle(rec);
  }

  app.get<P>(
    '/v1/calls/:callId',
    { schema: { summary: "A call's state and result", tags, params: Params, response: errorResponses(401, 404) } },
    async (req) => withoutLease(await readable(req, req.params.callId)),
  );

  app.get<P>(
    '/v1/calls/:callId/events',
    {
      exposeHeadRoute: false, // a HEAD would hold a body-less stream open until the call ends
      schema: {
        summary: "A long-running call's events (server-sent events): started, progress (about one every 2 s), finished",
        tags,
        params: Params,
        produces: ['text/event-stream'],
        response: errorResponses(401, 404),
      },
    },
    async (req, reply) => {
      const rec = await readable(req, req.params.callId);
      streamCallEvents(gw, req, reply, withoutLease(rec), withoutLease);
    },
  );

  app.delete<P>(
    '/v1/calls/:callId',
    { schema: { summary: 'Cancel a running call (the upstream work is aborted)', tags, params: Params, response: errorResponses(401, 403, 404, 409) } },
    async (req, reply) => {
      const rec = await readable(req, req.params.callId);
      if (!madeBy(rec, req.caller) && !req.caller.roles.has('admin')) throw new GatewayError('FORBIDDEN', 'only the caller that made a call, or an admin, may cancel it');
      if (rec.status === 'pending_confirmation') throw new GatewayError('CONFLICT', 'the call waits for approval: reject its confirmation instead');
      if (rec.status !== 'running' || !rec.async) throw new GatewayError('CONFLICT', `the call is ${rec.status}: there is nothing to cancel`);
      const how = await gw.background.cancel(rec.callId);
      if (how === 'requested') {
        reply.code(202);
        return { ...withoutLease(rec), cancelRequested: true };
      }
      return withoutLease((await gw.calls.get(rec.callId)) ?? rec);
    },
  );

  app.get<P & { Querystring: Static<typeof PageQuery> }>(
    '/v1/calls/:callId/result',
    { schema: { summary: "A page of a large result's full text (bytes from offset)", tags, params: Params, querystring: PageQuery, response: errorResponses(400, 401, 404) } },
    async (req) => {
      const { callId } = req.params;
      const owner = await gw.pages.owner(callId);
      if (!owner || !mayRead(req, owner)) throw new GatewayError('NOT_FOUND', `no kept result for call '${callId}' (results are kept ${gw.config.calls.retentionSeconds} s)`);
      const page = await gw.pages.page(callId, req.query.offset ?? 0, req.query.limit ?? 16384);
      if (!page) throw new GatewayError('NOT_FOUND', `no kept result for call '${callId}'`);
      return { ...page, ...(page.nextOffset !== null ? { next: `/v1/calls/${callId}/result?offset=${page.nextOffset}` } : {}) };
    },
  );
}
