#!/usr/bin/env node
import { parseArgs, UsageError, USAGE } from './args.js';

/**
 * `toolgate check [--config F] [--tools-dir D] [--json] [--connect[=MS]]`: validates a config and its tools.d as the
 * server would, for a tools.d repository's CI. Exit 0: no errors; 1: errors; 2: usage error.
 */
async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] === 'init') return init(argv);
  let args;
  try {
    args = parseArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`toolgate check: ${e.message}\n${USAGE}\n`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  // Loaded only now: the loaders compile their schemas at import, which a usage error need not wait for.
  const [{ runCheck }, { formatReport }] = await Promise.all([import('./run.js'), import('./format.js')]);
  const report = await runCheck({ config: args.config, toolsDir: args.toolsDir, env: process.env, connectTimeoutMs: args.connectTimeoutMs });
  process.stdout.write(args.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
  return report.ok ? 0 : 1;
}

/** `toolgate init ...`: a first tool file (see init.ts). */
async function init(argv: readonly string[]): Promise<number> {
  const { parseInitArgs, INIT_USAGE } = await import('./init-args.js');
  let args;
  try {
    args = parseInitArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`toolgate init: ${e.message}\n${INIT_USAGE}\n`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(`${INIT_USAGE}\n`);
    return 0;
  }
  const { runInit } = await import('./init.js');
  const out = runInit(args, process.env);
  if (!out.ok) {
    process.stderr.write(`toolgate init: ${out.message}\nNothing was written.\n`);
    return 1;
  }
  process.stdout.write(`wrote ${out.file} (tool ${out.name}); check it with: npm run check\n${out.next}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`toolgate check: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  },
);
