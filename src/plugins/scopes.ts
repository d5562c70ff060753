import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../errors.js';
import { issuerOf, type ProtectedResource } from '../auth/resource.js';

/**
 * After authentication: a token caller whose issuer lists `requiredScopes` must carry all of them
 * to use this context at all (403 insufficient_scope otherwise). API-key callers are not asked.
 */
export function requireScopes(app: FastifyInstance, pr: ProtectedResource | undefined): void {
  if (!pr || pr.scopesSupported.length === 0) return;
  app.addHook('onRequest', (req, _reply, done) => {
    const id = req.caller?.identity;
    const need = id ? (issuerOf(pr, id.issuer)?.requiredScopes ?? []) : [];
    const missing = id ? need.filter((s) => !id.scopes.includes(s)) : [];
    if (missing.length === 0) return done();
    done(
      new GatewayError('FORBIDDEN', `the access token lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(' ')} that using this gateway needs`, {
        modelMessage: 'The access token does not grant use of this gateway. Do not retry; the user must sign in again and grant the listed scopes.',
        insufficientScope: need,
      }),
    );
  });
}
