import type { BackendFile } from './schema.js';
import type { BackendTarget, CompiledProbe } from './types.js';

/** Compiles a backend's `probe`: http for HTTP backends, mcpPing for MCP backends; nothing for builtins. */
export function compileProbe(b: BackendFile, target: BackendTarget, at: string, problem: (path: string, message: string) => void): CompiledProbe | undefined {
  const p = b.probe;
  if (!p) return undefined;
  if ((p.http === undefined) === (p.mcpPing === undefined)) {
    problem(at, 'a probe has exactly one of http or mcpPing');
    return undefined;
  }
  const counts = { intervalMs: p.intervalMs, healthyAfter: p.healthyAfter ?? 2, unhealthyAfter: p.unhealthyAfter ?? 3 };
  if (p.http) {
    if (target.kind !== 'http' || !b.http) {
      problem(`${at}/http`, 'an http probe needs an http backend');
      return undefined;
    }
    // Scheme and host of a backend URL are never templated, so the origin is fixed.
    const origin = new URL(b.http.url.replace(/\{\{[^}]*\}\}/g, 'x')).origin;
    return { ...counts, check: { kind: 'http', url: origin + p.http.path, expectStatus: p.http.expectStatus } };
  }
  if (target.kind !== 'mcp') {
    problem(`${at}/mcpPing`, 'an mcpPing probe needs an mcp backend');
    return undefined;
  }
  return { ...counts, check: { kind: 'mcp', server: target.server } };
}
