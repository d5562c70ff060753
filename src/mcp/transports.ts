import { SSEClientTransport, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import type { McpServerFile } from '../tools/mcp-server-schema.js';
import { boundedFetch } from './bounded-fetch.js';
import { ProcessGroupStdioTransport } from './stdio-transport.js';

/** Settings of the pool that shape a stdio child. */
export interface ChildSettings {
  killGraceMs: number;
  stderrTailBytes: number;
}

/** A fresh, unstarted transport for one session with the server a file describes. */
export function createTransport(spec: McpServerFile, child: ChildSettings): Transport {
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
      });
    case 'sse':
      return new SSEClientTransport(new URL(spec.url), {
        requestInit: { headers: { ...spec.headers } },
        fetch: boundedFetch(),
      });
  }
}

/** The fields that decide which server process or endpoint a session talks to. */
export function connectionKey(spec: McpServerFile): string {
  const sorted = (map: Readonly<Record<string, string>> | undefined): [string, string][] =>
    Object.entries(map ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return spec.transport === 'stdio'
    ? JSON.stringify(['stdio', spec.command, spec.args ?? [], sorted(spec.env), spec.cwd ?? null])
    : JSON.stringify([spec.transport, spec.url, sorted(spec.headers)]);
}
