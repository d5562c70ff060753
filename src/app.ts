import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Gateway, type GatewayOptions } from './gateway.js';
import { registerErrorHandling } from './plugins/errors.js';
import { registerRequestChecks } from './plugins/framework-errors.js';
import { serverOptions } from './server-options.js';
import { requireCaller } from './plugins/auth.js';
import { requireScopes } from './plugins/scopes.js';
import { wellKnownRoutes } from './routes/well-known.js';
import { configuredOrigin, registerOriginPolicy } from './plugins/origin.js';
import { ErrorBody, ToolResult } from './routes/schemas.js';
import { toolRoutes } from './routes/tools.js';
import { healthRoutes } from './routes/health.js';
import { adminRoutes } from './routes/admin.js';
import { metricsRoutes } from './plugins/metrics.js';
import { registerDrain } from './plugins/drain.js';
import { lazyChildLoggerFactory } from './plugins/lazy-logger.js';
import { lazySerializers } from './plugins/lazy-serializers.js';
import { loggedUrl } from './util/log-url.js';
import { confirmationRoutes } from './routes/confirmations.js';
import { callRoutes } from './routes/calls.js';
import { batchRoutes } from './routes/batch.js';
import { mcpServerRoutes } from './mcp-server/plugin.js';
import { auditRoutes } from './routes/audit.js';
import { routeRoutes } from './routes/route.js';
import { learnedRoutes } from './routes/learned.js';
import { consoleRoutes } from './routes/console.js';
import { consoleOidcSettings } from './config/console-oidc.js';

declare module 'fastify' {
  interface FastifyInstance {
    gw: Gateway;
  }
}

export interface AppOptions extends GatewayOptions {
  logger?: FastifyServerOptions['loggerInstance'] | false;
}

const REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/** A caller's x-request-id is kept when it is short and plain; otherwise a fresh one is made. */
function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/** Builds the whole gateway as a Fastify instance (not listening): tests inject() it, server.ts listens. */
export async function buildApp(opts: AppOptions): Promise<FastifyInstance> {
  const { config } = opts.loaded;
  const app = Fastify({
    ...(opts.logger ? { loggerInstance: opts.logger, childLoggerFactory: lazyChildLoggerFactory } : { logger: false }),
    bodyLimit: config.server.bodyLimitBytes,
    genReqId: requestId,
    logController: new LogController({ requestIdLogLabel: 'requestId', disableRequestLogging: true }),
    ajv: { customOptions: { removeAdditional: false, allErrors: true } },
    schemaController: { compilersFactory: { buildSerializer: lazySerializers() } },
    ...serverOptions(config.server),
  });
  // Only JSON bodies reach a route: text/plain is, with forms, what a cross-site page may send
  // without a preflight, and Fastify parses it by default (a second line behind the origin policy).
  app.removeContentTypeParser('text/plain');
  const gw = new Gateway({ ...opts, log: app.log });
  app.decorate('gw', gw);
  // Synchronous hooks: an async hook costs a promise per request on the hot path.
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  registerRequestChecks(app); // a request without Host is malformed (400) before it is foreign (403)
  // Host and Origin of every route, unknown ones included: before authentication and body parsing.
  registerOriginPolicy(app, {
    host: config.server.host,
    port: config.server.port,
    allowedOrigins: [...config.server.allowedOrigins, ...config.mcp.allowedOrigins].map(configuredOrigin).filter((o): o is string => o !== undefined),
    keyless: gw.keys.open !== undefined,
  });
  if (opts.logger && ['trace', 'debug', 'info'].includes(opts.logger.level)) {
    app.addHook('onResponse', (req, reply, done) => {
      const caller = (req as { caller?: { id: string } }).caller?.id;
      req.log.info({ method: req.method, url: loggedUrl(req.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime), caller }, 'request');
      done();
    });
  }
  app.addHook('onClose', async () => gw.close());
  registerErrorHandling(app, { resource: gw.resource });
  registerDrain(app, gw);
  app.addSchema(ErrorBody);
  app.addSchema(ToolResult);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'toolgate', version: '0.1.0', description: 'HTTP tool gateway for LLM agents' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    refResolver: { buildLocalReference: (json, _base, _frag, i) => (typeof json['$id'] === 'string' ? json['$id'] : `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  await app.register(healthRoutes, { gw });
  await app.register(wellKnownRoutes, { gw });
  await app.register(metricsRoutes, { gw });
  await app.register(mcpServerRoutes, { gw, onSearch: (e) => gw.searchEvents.onSearch(e) }); // its own context and key check
  if (config.console.enabled) await app.register(consoleRoutes, { oidc: consoleOidcSettings(config) }); // static page, no key: its script sends the key to /v1
  await app.register(async (api) => {
    requireCaller(api, gw.auth);
    requireScopes(api, gw.resource);
    await api.register(toolRoutes, { gw });
    await api.register(adminRoutes, { gw });
    await api.register(confirmationRoutes, { gw });
    await api.register(callRoutes, { gw });
    await api.register(batchRoutes, { gw });
    await api.register(auditRoutes, { gw });
    await api.register(routeRoutes, { gw, observe: (s) => gw.metrics.observeRoute(s) });
    await api.register(learnedRoutes, { gw });
  });

  await gw.start();
  return app;
}
