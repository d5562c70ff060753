import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import type { Role } from '../config/schema.js';
import type { Caller } from '../auth/caller.js';
import type { KeyTable } from '../auth/keys.js';
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

/**
 * Adds authentication to the routes of this (encapsulated) context: a Bearer key maps to a
 * caller; a route's `config.role` asks for a role on top.
 */
export function requireCaller(app: FastifyInstance, keys: KeyTable): void {
  app.decorateRequest('caller', null as unknown as Caller);
  // Synchronous, and the role check bound per route at registration: no promise and no
  // routeOptions object (a fresh one per access) on every request.
  app.addHook('onRequest', (req, _reply, done) => {
    const caller = keys.resolve(req.headers.authorization);
    if (!caller) {
      done(new GatewayError('UNAUTHENTICATED', req.headers.authorization ? 'unknown API key' : 'missing Authorization: Bearer <key>'));
      return;
    }
    req.caller = caller;
    done();
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
