import type { IncomingHttpHeaders } from 'node:http';

/** Where the gateway listens: the address it is bound to and its port. */
export interface Binding {
  host: string;
  port: number | undefined;
}

const WILDCARDS = new Set(['0.0.0.0', '::', '']);
const BRACKETED = /^\[(.*)\]$/;
const LOOPBACK_V4 = /^(::ffff:)?127(\.\d{1,3}){3}$/;

/** 'localhost', 127.0.0.0/8 and ::1 (brackets and an IPv4-mapped form included). */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(BRACKETED, '$1');
  return h === 'localhost' || h === '::1' || LOOPBACK_V4.test(h);
}

/**
 * Whether a Host header names loopback, remembered per value: a client sends the same Host on
 * every request, and reading it costs a URL parse. At most HOST_MEMO values are kept (many
 * distinct ones only empty the memo).
 */
const hostVerdicts = new Map<string, boolean>();
const HOST_MEMO = 256;

function hostIsLoopback(hostHeader: string): boolean {
  let loopback = hostVerdicts.get(hostHeader);
  if (loopback === undefined) {
    const name = hostnameOf(hostHeader);
    loopback = name !== undefined && isLoopbackHost(name);
    if (hostVerdicts.size >= HOST_MEMO) hostVerdicts.clear();
    hostVerdicts.set(hostHeader, loopback);
  }
  return loopback;
}

/** The bound address's verdict, for the one binding a gateway has (computed again only if it changes). */
let boundHost: string | undefined;
let boundIsLoopback = false;

function bindingIsLoopback(host: string): boolean {
  if (host !== boundHost) {
    boundHost = host;
    boundIsLoopback = isLoopbackHost(host);
  }
  return boundIsLoopback;
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
  if (bindingIsLoopback(binding.host)) {
    if (headers.host === undefined || !hostIsLoopback(headers.host)) return `Host '${headers.host ?? ''}' is not a loopback name`;
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
