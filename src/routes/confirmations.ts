import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { Gateway } from '../gateway.js';
import { runApproved } from '../confirm/run.js';
import { notFound, type Confirmation } from '../confirm/service.js';
import { CallResponse, errorResponses } from './schemas.js';
import { identityFields } from '../audit/identity.js';

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) });
const DecisionBody = Type.Union([Type.Null(), Type.Object({ note: Type.Optional(Type.String({ maxLength: 2000 })) }, { additionalProperties: false })]);
const ListQuery = Type.Object({ status: Type.Optional(Type.Literal('pending')) });

/** What an approver sees: never the raw arguments, only their redacted form. */
function view(c: Confirmation) {
  return {
    id: c.id,
    callId: c.callId,
    tool: c.tool,
    caller: c.caller,
    ...identityFields(c.asker?.identity),
    sessionId: c.sessionId ?? null,
    arguments: c.argsRedacted,
    summary: c.summary,
    status: c.status,
    createdAt: c.createdAt,
    expiresAt: c.expiresAt,
    ...(c.approver ? { approver: c.approver, decidedAt: c.decidedAt } : {}),
    ...(c.note ? { note: c.note } : {}),
  };
}

/** Confirmation gates: list what an approver may decide; approve (runs the call once) or reject. */
export async function confirmationRoutes(app: FastifyInstance, opts: { gw: Gateway }): Promise<void> {
  const { gw } = opts;
  const tags = ['confirmations'];

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/v1/confirmations',
    { config: { role: 'approver' }, schema: { summary: 'Pending confirmations this approver may decide', tags, querystring: ListQuery, response: errorResponses(400, 401, 403) } },
    async (req) => {
      const pending = await gw.confirmations.pending();
      return { confirmations: pending.filter((c) => gw.confirmations.mayDecide(req.caller, c) === undefined).map(view) };
    },
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/v1/confirmations/:id',
    { config: { role: 'approver' }, schema: { summary: 'One confirmation', tags, params: IdParams, response: errorResponses(401, 403, 404) } },
    async (req) => {
      // Outside the key's tool scope a confirmation is not shown, nor is its existence.
      const c = await gw.confirmations.getFor(req.params.id, req.caller);
      if (!c) throw notFound(req.params.id);
      return view(c);
    },
  );

  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof DecisionBody> }>(
    '/v1/confirmations/:id/approve',
    {
      config: { role: 'approver' },
      schema: {
        summary: 'Approve: the call runs now, exactly once, and its result is returned',
        tags,
        params: IdParams,
        body: DecisionBody,
        response: { 200: CallResponse, ...errorResponses(401, 403, 404, 409, 410, 422, 502, 503, 504) },
      },
    },
    async (req) => {
      const conf = await gw.confirmations.decide(req.params.id, req.caller, 'approved', req.body?.note);
      return runApproved(gw, conf, req.id);
    },
  );

  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof DecisionBody> }>(
    '/v1/confirmations/:id/reject',
    {
      config: { role: 'approver' },
      schema: { summary: 'Reject: the call never runs', tags, params: IdParams, body: DecisionBody, response: errorResponses(401, 403, 404, 409, 410) },
    },
    async (req) => {
      const conf = await gw.confirmations.decide(req.params.id, req.caller, 'rejected', req.body?.note);
      await gw.calls.update(conf.callId, { status: 'rejected', approver: req.caller.id });
      return view(conf);
    },
  );
}
