import { passthroughClashes } from '../mcp/import.js';
import { listPassthroughNames, type PassthroughNames } from '../mcp/passthrough.js';
import { McpPool } from '../mcp/pool.js';
import type { McpServerEntry } from '../tools/mcp-file.js';
import type { FileProblem } from '../util/source.js';
import type { ConnectResult } from './types.js';

/**
 * `toolgate check --connect`: starts every declared MCP server once, in parallel, bounded by
 * `timeoutMs` each (no retry), lists its tools and ends it. A server that does not come up is an
 * error naming the cause, as GET /admin/mcp would show it. Servers with `prefix: ""` that give
 * one resource URI, template or prompt name are errors of the later file, as a reload reports them.
 */
export async function connectOnce(
  servers: readonly McpServerEntry[],
  opts: { timeoutMs: number; secrets: ReadonlySet<string> },
): Promise<{ results: Map<string, ConnectResult>; errors: FileProblem[] }> {
  const pool = new McpPool(
    servers.map((s) => ({ ...s.spec, prestart: true })),
    { secrets: opts.secrets, connectTimeoutMs: opts.timeoutMs, killGraceMs: 500, backoff: { initialMs: 3_600_000, maxMs: 3_600_000 } },
  );
  const results = new Map<string, ConnectResult>();
  const errors: FileProblem[] = [];
  const names = new Map<string, PassthroughNames>();
  try {
    await pool.start();
    await Promise.all(
      servers.map(async ({ spec, file, pointer }) => {
        const status = pool.status(spec.name);
        let error = status?.state === 'ready' ? undefined : (status?.lastError ?? 'did not connect');
        let tools: number | undefined;
        if (error === undefined) {
          tools = await pool.listTools(spec.name, { deadline: Date.now() + opts.timeoutMs }).then(
            (list) => list.length,
            (err: unknown) => {
              error = `tools/list failed: ${err instanceof Error ? err.message : String(err)}`;
              return undefined;
            },
          );
        }
        if (error === undefined && (spec.prefix ?? spec.name) === '') {
          const session = await pool.upstream(spec.name, Date.now() + opts.timeoutMs).catch(() => undefined);
          if (session) names.set(spec.name, await listPassthroughNames(session.sdk, opts.timeoutMs));
        }
        const protocolVersion = pool.status(spec.name)?.protocolVersion;
        if (error !== undefined) {
          results.set(spec.name, { ok: false, error });
          errors.push({ file, path: pointer, message: `MCP server '${spec.name}' cannot connect: ${error}` });
        } else {
          results.set(spec.name, { ok: true, ...(protocolVersion === undefined ? {} : { protocolVersion }), tools: tools ?? 0 });
        }
      }),
    );
    errors.push(...passthroughClashes(servers.map((entry) => ({ entry, names: names.get(entry.spec.name) }))));
  } finally {
    await pool.close();
  }
  return { results, errors };
}
