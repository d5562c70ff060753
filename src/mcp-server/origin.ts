import type { IncomingHttpHeaders } from 'node:http';

/** Where the gateway listens: the address it is bound to and its port. */
export interface Binding {
  host: string;
  port: number | undefined;
}

const WILDCARDS = new Set(['0.0.0.0', '::', '']);

/** 'localhost', 127.0.0.0/8 and ::1 (brackets and an IPv4-mapped form included). */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return h === 'localhost' || h === '::1' || /^(::ffff:)?127(\.\d{1,3}){3}$/.test(h);
}

function hostnameOf(hostHeader: string): string | undefined {
  try {
    return new URL(`http://${hostHeader}`).hostname;
  } catch {
    return undefined;
  }
}

function originOf(value: string): URL | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/**
 * DNS-rebinding protection for /mcp (MCP transport spec): a browser page of another site must not
 * reach the gateway through a name that resolves to it. `Origin`, when sent, must be loopback, the
 * gateway's own origin or configured; bound to loopback, `Host` must name loopback too. The own
 * origin comes from the bound address, never from the request's Host (that is what a rebinding
 * attacker controls). Returns why a request is refused, or undefined.
 */
export function originProblem(headers: IncomingHttpHeaders, binding: Binding, allowedOrigins: ReadonlySet<string>): string | undefined {
  const boundLoopback = isLoopbackHost(binding.host);
  if (boundLoopback) {
    const host = headers.host === undefined ? undefined : hostnameOf(headers.host);
    if (host === undefined || !isLoopbackHost(host)) return `Host '${headers.host ?? ''}' is not a loopback name`;
  }
  const origin = headers.origin;
  if (origin === undefined) return undefined;
  const url = originOf(origin);
  if (!url) return `Origin '${origin}' is not allowed`;
  if (isLoopbackHost(url.hostname) || allowedOrigins.has(url.origin)) return undefined;
  if (!WILDCARDS.has(binding.host) && binding.port !== undefined && url.origin === originOf(`http://${binding.host}:${binding.port}`)?.origin) {
    return undefined;
  }
  return `Origin '${url.origin}' is not allowed (add it to mcp.allowedOrigins)`;
}

/** Configured origins, normalized the way a browser sends them (scheme://host[:port], no path). */
export function normalizeOrigins(list: readonly string[]): Set<string> {
  return new Set(list.map((o) => originOf(o)?.origin).filter((o): o is string => o !== undefined));
}
