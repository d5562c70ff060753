import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Gateway } from '../gateway.js';
import { GatewayError } from '../errors.js';
import { KEYS_ONLY } from '../auth/challenge.js';
import { METADATA_PATH, metadataDocument } from '../auth/resource.js';
import { errorResponses } from './schemas.js';

const Metadata = Type.Object(
  {
    resource: Type.String(),
    authorization_servers: Type.Array(Type.String()),
    bearer_methods_supported: Type.Array(Type.String()),
    scopes_supported: Type.Optional(Type.Array(Type.String())),
    resource_name: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** Where OAuth clients look for an authorization server when a resource names none (the MCP SDKs' fallbacks). */
const OAUTH_GUESSES = [
  { method: 'GET', url: '/.well-known/oauth-authorization-server' },
  { method: 'GET', url: '/.well-known/openid-configuration' },
  { method: 'POST', url: '/register' },
  { method: 'GET', url: '/authorize' },
  { method: 'POST', url: '/token' },
] as const;

/**
 * RFC 9728 protected-resource metadata, no key needed. Without `auth.oidc` the documents and the
 * endpoints OAuth clients guess next answer 404 saying the gateway takes API keys only: that is
 * the text mcp-remote and the Inspector show when their OAuth flow fails at POST /register.
 */
export async function wellKnownRoutes(app: FastifyInstance, opts: { gw: Gateway }): Promise<void> {
  const pr = opts.gw.resource;
  const keysOnly = () => new GatewayError('NOT_FOUND', KEYS_ONLY, { modelMessage: 'This gateway has no OAuth. Use an API key.' });
  for (const suffix of ['', '/mcp'] as const) {
    app.get(
      `${METADATA_PATH}${suffix}`,
      {
        schema: {
          summary: suffix === '' ? 'OAuth protected-resource metadata of the gateway (RFC 9728)' : 'OAuth protected-resource metadata of <publicUrl>/mcp (RFC 9728 §3.1)',
          tags: ['identity'],
          security: [],
          response: { 200: Metadata, ...errorResponses(404) },
        },
      },
      async (_req, reply) => {
        if (!pr) throw keysOnly();
        const { resource } = pr;
        if (resource === undefined) throw new GatewayError('NOT_FOUND', 'server.publicUrl is not configured, so the gateway publishes no OAuth metadata: its operator must set it to the URL clients reach the gateway at');
        return reply.header('cache-control', 'public, max-age=300').send(metadataDocument({ ...pr, resource }, suffix));
      },
    );
  }
  if (pr) return;
  // Whatever the client sends (JSON registration, a form to /token) gets the same answer.
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, _body, done) => done(null, undefined));
  for (const r of OAUTH_GUESSES) {
    app.route({ method: r.method, url: r.url, schema: { hide: true }, handler: async () => { throw keysOnly(); } });
  }
}
