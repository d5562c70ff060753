/** Command line of `toolgate init`. */
import { UsageError } from './args.js';

export interface InitArgs {
  readonly fromUrl: string | undefined;
  readonly fromMcp: string | undefined;
  readonly method: 'GET' | 'POST';
  readonly name: string | undefined;
  readonly config: string | undefined;
  readonly toolsDir: string | undefined;
  readonly help: boolean;
}

export const INIT_USAGE = `usage: toolgate init --from-url URL [--method GET|POST] [--name x.y] [--tools-dir DIR]
       toolgate init --from-mcp "COMMAND LINE" [--name x] [--tools-dir DIR]

Writes a first tool file into tools.d (never over an existing one), validated as the server would:
  --from-url URL    a tool whose backend is URL; its query parameters become string arguments,
                    POST adds a free-form 'body' object; GET is sideEffect read, POST write
  --from-mcp LINE   a kind: mcp-server file that starts LINE over stdio
  --name NAME       the tool (or server) name (default: guessed from the URL or command)
  --tools-dir DIR   where to write (default: the config's tools.dir)
  --config FILE     config file (default: $TOOLGATE_CONFIG, else config/gateway.yaml)
Exit status: 0 written, 1 refused (nothing written), 2 usage error.`;

export function parseInitArgs(argv: readonly string[]): InitArgs {
  let fromUrl: string | undefined;
  let fromMcp: string | undefined;
  let method: 'GET' | 'POST' | undefined;
  let name: string | undefined;
  let config: string | undefined;
  let toolsDir: string | undefined;
  let help = false;
  for (let i = argv[0] === 'init' ? 1 : 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = arg.indexOf('=');
    const flag = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    const value = (): string => {
      const v = flag !== arg ? arg.slice(eq + 1) : argv[++i];
      if (v === undefined || v === '') throw new UsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--from-url':
        fromUrl = value();
        break;
      case '--from-mcp':
        fromMcp = value();
        break;
      case '--method': {
        const m = value().toUpperCase();
        if (m !== 'GET' && m !== 'POST') throw new UsageError('--method is GET or POST');
        method = m;
        break;
      }
      case '--name':
        name = value();
        break;
      case '--config':
        config = value();
        break;
      case '--tools-dir':
        toolsDir = value();
        break;
      case '-h':
      case '--help':
        help = true;
        break;
      default:
        throw new UsageError(arg.startsWith('-') ? `unknown option ${arg}` : `unexpected argument ${arg}`);
    }
  }
  if (!help && (fromUrl === undefined) === (fromMcp === undefined)) throw new UsageError('give one of --from-url or --from-mcp');
  if (fromMcp !== undefined && method !== undefined) throw new UsageError('--method goes with --from-url');
  return { fromUrl, fromMcp, method: method ?? 'GET', name, config, toolsDir, help };
}
