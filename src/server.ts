import { buildApp } from './app.js';
import { anyIndexBuilt, indexFor } from './prefilter/registry-index.js';
import { loadConfig, ConfigError } from './config/load.js';
import { createLogger } from './logger.js';

/** After a drain timed out and connections were cut: time for aborted calls to write their audit records. */
const ABORT_GRACE_MS = 2000;

/** Entry point: load config, build the app, listen, close gracefully. The only reader of process.env. */
async function main(): Promise<void> {
  const env = process.env;
  let loaded;
  try {
    loaded = loadConfig({ env });
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`toolgate: invalid configuration\n${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
  const logger = createLogger(env['LOG_LEVEL'] ?? 'info', loaded.secrets);
  for (const w of loaded.warnings) logger.warn(w);

  const app = await buildApp({ loaded, env, logger });
  const gw = app.gw;
  logger.info({ tools: gw.registry.size, generation: gw.registry.generation }, 'registry loaded');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const { drainTimeoutMs } = loaded.config.server;
    // /readyz answers 503 and new calls get 503 UNAVAILABLE from here on, while the listener stays
    // open: running calls finish (bounded) before the server closes.
    gw.draining = true;
    logger.info({ signal, inFlight: gw.inFlight.count, drainTimeoutMs }, 'shutting down: draining in-flight calls');
    const force = setTimeout(() => {
      logger.error('shutdown did not finish; exiting');
      process.exit(1);
    }, drainTimeoutMs + 5000);
    force.unref();
    if (!(await gw.inFlight.idle(drainTimeoutMs))) {
      logger.warn({ inFlight: gw.inFlight.count }, 'drain timed out: cutting the calls still running');
      app.server.closeAllConnections(); // their abort signals fire: upstream work stops, errors are audited
      await gw.inFlight.idle(ABORT_GRACE_MS);
    }
    await app.close(); // stops listening, then gw.close(): watcher, adapters, state, audit flushed
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // The gateway logs, audits and counts every reload itself.
  process.on('SIGHUP', () => void gw.reload().catch((e: unknown) => logger.error({ err: e }, 'reload failed')));

  const { host, port } = loaded.config.server;
  // The prefilter index is built by the first query that needs it (/v1/route, /mcp tool search),
  // which also loads the lexicons (~12 MiB of heap, ~0.3 s): a gateway that never ranks never
  // holds them. Once one was built, each reload's generation gets its index ahead of the next query.
  gw.on('reload', () => setImmediate(() => anyIndexBuilt() && indexFor(gw.registry)));
  const address = await app.listen({ host, port });
  logger.info({ address }, 'toolgate listening');
}

main().catch((e: unknown) => {
  process.stderr.write(`toolgate: failed to start: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
