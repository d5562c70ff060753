import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import type { Role } from '../config/schema.js';
import type { Caller } from '../auth/caller.js';
import type { Authenticator } from '../auth/authenticator.js';
import { GatewayError } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller;
  }
  interface FastifyContextConfig {
    /** The role a route needs beyond a valid key. */
    role?: Role;
  }
}

function authorizationLines(raw: string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]?.length === 13 && raw[i]?.toLowerCase() === 'authorization') n++;
  return n;
}

/**
 * Adds authentication to the routes of this (encapsulated) context: a Bearer key or access token
 * maps to a caller; a route's `config.role` asks for a role on top.
 */
export function requireCaller(app: FastifyInstance, auth: Authenticator): void {
  app.decorateRequest('caller', null as unknown as Caller);
  // Synchronous for API keys and tokens verified before, and the role check bound per route at
  // registration: no promise and no routeOptions object on every request. Only a token not seen
  // before waits for its verification.
  app.addHook('onRequest', (req, _reply, done) => {
    // Node keeps the first of two Authorization lines; a proxy in front may have judged the other.
    if (req.headers.authorization !== undefined && authorizationLines(req.raw.rawHeaders) > 1) {
      return done(new GatewayError('BAD_REQUEST', 'the request must carry at most one Authorization header'));
    }
    const r = auth.resolve(req.headers.authorization);
    if (r instanceof GatewayError) {
      done(r);
    } else if (r instanceof Promise) {
      r.then(
        (caller) => {
          req.caller = caller;
          done();
        },
        (e: unknown) => done(e instanceof Error ? e : new GatewayError('UNAUTHENTICATED', 'the credentials could not be checked')),
      );
    } else {
      req.caller = r;
      done();
    }
  });
  app.addHook('onRoute', (route) => {
    const role = route.config?.role;
    if (!role) return;
    const check: onRequestHookHandler = (req, _reply, done) => {
      if (!req.caller.roles.has(role)) done(new GatewayError('FORBIDDEN', `this needs the '${role}' role`));
      else done();
    };
    const own = route.onRequest;
    route.onRequest = own === undefined ? [check] : Array.isArray(own) ? [...own, check] : [own as onRequestHookHandler, check];
  });
}
