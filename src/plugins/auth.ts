import type { FastifyInstance, FastifyRequest } from 'fastify';
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
  app.addHook('onRequest', async (req: FastifyRequest) => {
    const caller = keys.resolve(req.headers.authorization);
    if (!caller) {
      throw new GatewayError('UNAUTHENTICATED', req.headers.authorization ? 'unknown API key' : 'missing Authorization: Bearer <key>');
    }
    const role = req.routeOptions.config.role;
    if (role && !caller.roles.has(role)) {
      throw new GatewayError('FORBIDDEN', `this needs the '${role}' role`);
    }
    req.caller = caller;
  });
}
