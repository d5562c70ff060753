import { SSEClientTransport, StreamableHTTPClientTransport, type AuthProvider, type Transport } from '@modelcontextprotocol/client';
import type { McpHttpServer, McpServerFile } from '../tools/mcp-server-schema.js';
import { compileCredentials } from '../auth/upstream/spec.js';
import type { UpstreamTokens } from '../auth/upstream/index.js';
import { sha256Hex } from '../util/hash.js';
import { boundedFetch } from './bounded-fetch.js';
import { ProcessGroupStdioTransport } from './stdio-transport.js';

/** Settings of the pool that shape a stdio child. */
export interface ChildSettings {
  killGraceMs: number;
  stderrTailBytes: number;
}

/** Where a server with `credentials` gets its token, and how long one fetch may take. */
export interface TokenSettings {
  tokens: UpstreamTokens;
  timeoutMs: number;
}

/** A fresh, unstarted transport for one session with the server a file describes. */
export function createTransport(spec: McpServerFile, child: ChildSettings, auth?: TokenSettings): Transport {
  switch (spec.transport) {
    case 'stdio':
      return new ProcessGroupStdioTransport({
        command: spec.command,
        args: spec.args ?? [],
        env: spec.env ?? {},
        ...(spec.cwd === undefined ? {} : { cwd: spec.cwd }),
        ...child,
      });
    case 'streamable-http':
      return new StreamableHTTPClientTransport(new URL(spec.url), {
        requestInit: { headers: { ...spec.headers } },
        fetch: boundedFetch(),
        ...authOption(spec, auth),
      });
    case 'sse':
      return new SSEClientTransport(new URL(spec.url), {
        requestInit: { headers: { ...spec.headers } },
        fetch: boundedFetch(),
        ...authOption(spec, auth),
      });
  }
}

/**
 * Client credentials on the pooled session: the transport asks for the token before every
 * request (the cache answers until shortly before expiry, then one fetch renews it), and a 401
 * drops the token so the SDK's one retry carries a new one. The loader refuses the per-caller
 * modes for MCP servers (see mcp-file.ts).
 */
function authOption(spec: McpHttpServer, auth: TokenSettings | undefined): { authProvider?: AuthProvider } {
  if (!spec.credentials || !auth) return {};
  const creds = compileCredentials(spec.credentials, '', () => undefined);
  if (creds?.kind !== 'clientCredentials') return {};
  const ask = { key: `mcp\0${spec.name}\0${sha256Hex(connectionKey(spec))}`, what: `MCP server '${spec.name}'`, upstream: new URL(spec.url), caller: undefined };
  let last: string | undefined;
  return {
    authProvider: {
      token: async () => (last = (await auth.tokens.token(creds, { ...ask, deadline: Date.now() + auth.timeoutMs })).token),
      onUnauthorized: async () => {
        if (last !== undefined) auth.tokens.invalidate(creds, ask, last);
      },
    },
  };
}

/** The fields that decide which server process or endpoint a session talks to. */
export function connectionKey(spec: McpServerFile): string {
  const sorted = (map: Readonly<Record<string, string>> | undefined): [string, string][] =>
    Object.entries(map ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return spec.transport === 'stdio'
    ? JSON.stringify(['stdio', spec.command, spec.args ?? [], sorted(spec.env), spec.cwd ?? null])
    : JSON.stringify([spec.transport, spec.url, sorted(spec.headers), spec.credentials ?? null]);
}
