import { buildApp } from './app.js';
import { loadConfig, ConfigError } from './config/load.js';
import { createLogger } from './logger.js';

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
  for (const p of gw.registry.problems) logger.warn({ file: p.file, line: p.line, path: p.path }, `tool file skipped: ${p.message}`);
  logger.info({ tools: gw.registry.size, generation: gw.registry.generation }, 'registry loaded');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: draining in-flight calls');
    gw.draining = true;
    const force = setTimeout(() => {
      logger.error('drain timed out; exiting');
      process.exit(1);
    }, loaded.config.server.drainTimeoutMs + 5000);
    force.unref();
    await app.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGHUP', () => {
    void gw.reload().then(
      (r) => logger.info({ generation: r.generation, tools: r.tools, errors: r.errors.length }, 'tools.d reloaded'),
      (e: unknown) => logger.error({ err: e }, 'reload failed'),
    );
  });

  const { host, port } = loaded.config.server;
  const address = await app.listen({ host, port });
  logger.info({ address }, 'toolgate listening');
}

main().catch((e: unknown) => {
  process.stderr.write(`toolgate: failed to start: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
