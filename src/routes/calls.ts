import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { Gateway } from '../gateway.js';
import { GatewayError } from '../errors.js';
import { errorResponses } from './schemas.js';

const Params = Type.Object({ callId: Type.String({ minLength: 1, maxLength: 128 }) });

/** GET /v1/calls/{callId}: a call's state, from pending to its result; for its caller, approvers and admins. */
export async function callRoutes(app: FastifyInstance, opts: { gw: Gateway }): Promise<void> {
  const { gw } = opts;
  app.get<{ Params: Static<typeof Params> }>(
    '/v1/calls/:callId',
    { schema: { summary: "A call's state and result", tags: ['calls'], params: Params, response: errorResponses(401, 404) } },
    async (req) => {
      const rec = await gw.calls.get(req.params.callId);
      const mayRead = rec && (rec.caller === req.caller.id || req.caller.roles.has('approver') || req.caller.roles.has('admin'));
      if (!rec || !mayRead) throw new GatewayError('NOT_FOUND', `no call '${req.params.callId}'`);
      if (rec.status === 'pending_confirmation' && rec.confirmationId) {
        const conf = await gw.confirmations.get(rec.confirmationId);
        if (conf?.status === 'expired') return { ...rec, status: 'expired' };
        if (conf?.status === 'rejected') return { ...rec, status: 'rejected', approver: conf.approver };
      }
      return rec;
    },
  );
}
