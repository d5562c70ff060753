import type { FastifyError, FastifyInstance } from 'fastify';
import { GatewayError, isGatewayError } from '../errors.js';
import { challengeFor } from '../auth/challenge.js';
import type { ProtectedResource } from '../auth/resource.js';

/** Maps anything thrown in a route to a GatewayError from the one catalogue. */
export function toGatewayError(err: FastifyError | Error): GatewayError {
  if (isGatewayError(err)) return err;
  const e = err as FastifyError;
  if (e.validation) {
    const details = e.validation.map((v) => ({ path: v.instancePath || '/', message: v.message ?? v.keyword }));
    const where = e.validationContext ?? 'body';
    return new GatewayError('BAD_REQUEST', `invalid request ${where}: ${details.map((d) => `${d.path} ${d.message}`).join('; ')}`, { details });
  }
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError('PAYLOAD_TOO_LARGE', 'the request body is larger than the limit');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError('BAD_REQUEST', 'the request body must be JSON (Content-Type: application/json)');
    case 'FST_ERR_CTP_INVALID_JSON':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError('BAD_REQUEST', `malformed JSON body: ${e.message}`);
  }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new GatewayError('BAD_REQUEST', e.message);
  }
  return new GatewayError('INTERNAL', 'internal error', { cause: err });
}

/**
 * One error handler and one not-found handler: every error body has the SPEC §3 shape. A 401 or
 * 403 gets its WWW-Authenticate challenge here, whichever route or hook refused.
 */
export function registerErrorHandling(app: FastifyInstance, opts: { resource?: ProtectedResource | undefined } = {}): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    let g = toGatewayError(err);
    if (g.status === 401 || g.status === 403) {
      const c = challengeFor(g, req, opts.resource);
      g = c.error;
      if (c.header) reply.header('www-authenticate', c.header);
    }
    if (g.code === 'INTERNAL') req.log.error({ err }, 'unhandled error');
    if (g.retryAfterSeconds !== undefined) reply.header('retry-after', String(Math.max(1, Math.ceil(g.retryAfterSeconds))));
    return reply.code(g.status).send(g.toBody());
  });
  app.setNotFoundHandler((req, reply) => {
    const g = new GatewayError('NOT_FOUND', `no route ${req.method} ${req.url.split('?')[0]}`);
    return reply.code(g.status).send(g.toBody());
  });
}
