/** Command line of `toolgate check`. */

export interface CheckArgs {
  readonly config: string | undefined;
  readonly toolsDir: string | undefined;
  readonly json: boolean;
  readonly help: boolean;
  /** `--connect[=MS]`: start each MCP server once, bounded by MS (default 10000). */
  readonly connectTimeoutMs: number | undefined;
}

export const USAGE = `usage: toolgate check [--config FILE] [--tools-dir DIR] [--json] [--connect[=MS]]

Validates the gateway config and every tools.d file as the server would, lists the tools it
would serve and warns about risky settings.
  --config FILE     config file (default: $TOOLGATE_CONFIG, else config/gateway.yaml)
  --tools-dir DIR   tools directory (default: the config's tools.dir)
  --json            one JSON document { ok, errors, warnings, tools, ... }
  --connect[=MS]    also start each MCP server once (each bounded by MS, default 10000), list its
                    tools and end it; a server that does not come up is an error naming why;
                    and fetch each auth.oidc issuer's discovery document and JWKS
Exit status: 0 no errors (warnings allowed), 1 errors found, 2 usage error.`;

export class UsageError extends Error {}

export function parseArgs(argv: readonly string[]): CheckArgs {
  let config: string | undefined;
  let toolsDir: string | undefined;
  let json = false;
  let help = false;
  let connectTimeoutMs: number | undefined;
  // `toolgate check ...` (the npm bin) and `node dist/cli/check.js ...` both work.
  for (let i = argv[0] === 'check' ? 1 : 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = arg.indexOf('=');
    const flag = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    const value = (): string => {
      const v = eq > 0 && flag !== arg ? arg.slice(eq + 1) : argv[++i];
      if (v === undefined || v === '' || (flag === arg && v.startsWith('--'))) throw new UsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--config':
        config = value();
        break;
      case '--tools-dir':
        toolsDir = value();
        break;
      case '--json':
        if (flag !== arg) throw new UsageError('--json takes no value');
        json = true;
        break;
      case '--connect': {
        const ms = flag === arg ? 10_000 : Number(arg.slice(eq + 1));
        if (!Number.isInteger(ms) || ms < 100 || ms > 600_000) throw new UsageError('--connect takes a time in ms, 100 to 600000');
        connectTimeoutMs = ms;
        break;
      }
      case '-h':
      case '--help':
        help = true;
        break;
      default:
        throw new UsageError(arg.startsWith('-') ? `unknown option ${arg}` : `unexpected argument ${arg}`);
    }
  }
  return { config, toolsDir, json, help, connectTimeoutMs };
}
