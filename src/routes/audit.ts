import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { Gateway } from '../gateway.js';
import { GatewayError } from '../errors.js';
import { errorResponses } from './schemas.js';

const Query = Type.Object(
  {
    tool: Type.Optional(Type.String()),
    caller: Type.Optional(Type.String()),
    subject: Type.Optional(Type.String({ description: "a token caller's subject (sub)" })),
    issuer: Type.Optional(Type.String({ description: "a token caller's issuer" })),
    outcome: Type.Optional(Type.String()),
    event: Type.Optional(Type.String()),
    findings: Type.Optional(Type.Boolean({ description: 'true: only records with findings (result guards that flagged, redacted, stripped or refused; tool definitions held for findings); false: only records without' })),
    since: Type.Optional(Type.String({ format: 'date-time' })),
    until: Type.Optional(Type.String({ format: 'date-time' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    cursor: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** GET /v1/audit: audit records, newest first, filtered, paged by cursor (admin role). */
export async function auditRoutes(app: FastifyInstance, opts: { gw: Gateway }): Promise<void> {
  const { gw } = opts;
  app.get<{ Querystring: Static<typeof Query> }>(
    '/v1/audit',
    { config: { role: 'admin' }, schema: { summary: 'Audit records, newest first', tags: ['audit'], querystring: Query, response: errorResponses(400, 401, 403) } },
    async (req) => {
      if (!gw.audit.query) throw new GatewayError('UNAVAILABLE', 'the configured audit sink cannot be queried');
      const q = req.query;
      const toIso = (t: string | undefined) => (t === undefined ? undefined : new Date(t).toISOString());
      return gw.audit.query({ ...q, since: toIso(q.since), until: toIso(q.until), limit: q.limit ?? 100 });
    },
  );
}
