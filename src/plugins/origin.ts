import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../errors.js';

/**
 * The one origin policy of every route (SPEC §6), against DNS rebinding and cross-site requests
 * from browsers. Non-browser clients send neither `Origin` nor `Sec-Fetch-Site` and meet only the
 * Host rule. Runs in a root onRequest hook: before authentication, body parsing and routing's 404.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** 'strict': a foreign Origin is refused on every method, reads included (the MCP transports). */
    origin?: 'strict';
  }
}

/** Where the gateway listens: the address it is bound to and its port. */
export interface Binding {
  host: string;
  port: number | undefined;
}

/** What the policy needs to know of the matched route; asked only for a foreign browser read. */
export interface RouteTraits {
  /** The MCP transports: any foreign Origin is refused. */
  strict: boolean;
  /** Needs the approver or admin role (approvals, admin routes, the audit). */
  privileged: boolean;
}

const WILDCARDS = new Set(['0.0.0.0', '::', '']);
const BRACKETED = /^\[(.*)\]$/;
const LOOPBACK_V4 = /^(::ffff:)?127(\.\d{1,3}){3}$/;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** 'localhost', 127.0.0.0/8 and ::1 (brackets and an IPv4-mapped form included). Not `*.localhost`. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(BRACKETED, '$1');
  return h === 'localhost' || h === '::1' || LOOPBACK_V4.test(h);
}

/**
 * A browser's `Origin` value as the policy compares it, or undefined when it is not a serialized
 * http(s) origin exactly as browsers send it ('null', paths, two values joined, odd spellings).
 */
function browserOrigin(value: string): string | undefined {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value ? value : undefined;
  } catch {
    return undefined;
  }
}

/** A configured origin normalized as browsers send it (`scheme://host[:port]`), or undefined if it is not one. */
export function configuredOrigin(value: string): string | undefined {
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    if (url.username || url.password || url.search || url.hash || url.pathname !== '/') return undefined;
    if (!/^https?:\/\/[^/?#]+\/?$/i.test(value)) return undefined; // "http://a/." and the like normalize to "/"
    return url.origin;
  } catch {
    return undefined;
  }
}

/** The origins that are the gateway itself: from the bound address, never from a request's Host. */
export function ownOrigins(binding: Binding): Set<string> {
  const out = new Set<string>();
  const { host, port } = binding;
  if (port === undefined || port === 0) return out;
  const add = (name: string) => out.add(new URL(`http://${name}:${port}`).origin);
  if (WILDCARDS.has(host)) {
    // A wildcard bind holds the loopback addresses' port too: those names reach this gateway.
    add('localhost');
    add('127.0.0.1');
    if (host !== '0.0.0.0') add('[::1]');
    return out;
  }
  const bare = host.replace(BRACKETED, '$1');
  add(bare.includes(':') ? `[${bare}]` : bare);
  if (bare === '127.0.0.1' || bare === '::1') add('localhost');
  if (bare === 'localhost') add('127.0.0.1');
  return out;
}

/**
 * Whether a Host header names loopback, remembered per value: a client sends the same Host on
 * every request, and reading it costs a URL parse. At most MEMO values are kept (many distinct
 * ones only empty the memo).
 */
const hostVerdicts = new Map<string, boolean>();
const MEMO = 256;

function hostIsLoopback(hostHeader: string): boolean {
  let loopback = hostVerdicts.get(hostHeader);
  if (loopback === undefined) {
    const name = hostnameOf(hostHeader);
    loopback = name !== undefined && isLoopbackHost(name);
    if (hostVerdicts.size >= MEMO) hostVerdicts.clear();
    hostVerdicts.set(hostHeader, loopback);
  }
  return loopback;
}

function hostnameOf(hostHeader: string): string | undefined {
  try {
    return new URL(`http://${hostHeader}`).hostname;
  } catch {
    return undefined;
  }
}

type Kind = 'own' | 'listed' | 'foreign';

/** The policy for one gateway: its allowed origins, its auth mode and (read per request) its binding. */
export class OriginPolicy {
  private readonly allowed: ReadonlySet<string>;
  private lastBinding: Binding | undefined;
  private boundKey: string | undefined;
  private loopbackBound = false;
  private own = new Set<string>();
  /** Origin value → kind, for the current binding. */
  private readonly kinds = new Map<string, Kind>();

  /**
   * @param allowed configured origins (server.allowedOrigins and mcp.allowedOrigins), normalized
   * @param keyless no key is needed (no key configured, or auth.mode none): every caller holds every role
   */
  constructor(allowed: Iterable<string>, private readonly keyless: boolean) {
    this.allowed = new Set(allowed);
  }

  /** Why a request is refused, or undefined. `route` is called only when the verdict depends on it. */
  problem(method: string, headers: IncomingHttpHeaders, binding: Binding, route: () => RouteTraits): string | undefined {
    this.rebind(binding);
    if (this.loopbackBound && (headers.host === undefined || !hostIsLoopback(headers.host))) {
      return `Host '${headers.host ?? ''}' is not a loopback name (the gateway listens on loopback ${binding.host})`;
    }
    const origin = headers.origin;
    let kind: Kind;
    if (origin !== undefined) {
      kind = this.kindOf(origin);
    } else {
      const site = headers['sec-fetch-site'];
      // A browser that sent no Origin (a navigation, an <img>): only its Sec-Fetch-Site tells.
      if (site !== 'cross-site' && site !== 'same-site') return undefined;
      kind = 'foreign';
    }
    if (kind === 'own') return undefined;
    const from = origin !== undefined ? `Origin '${origin}'` : `a ${String(headers['sec-fetch-site'])} browser request (Sec-Fetch-Site)`;
    if (kind === 'foreign' && !SAFE_METHODS.has(method)) return `${from} is not allowed${origin !== undefined ? ' (add it to server.allowedOrigins)' : ''}`;
    const traits = route();
    if (this.keyless && traits.privileged) {
      return `${from} is refused: with no API key configured, approvals and admin routes take no cross-origin browser request (configure auth.keys)`;
    }
    if (kind === 'foreign' && traits.strict) return `${from} is not allowed${origin !== undefined ? ' (add it to server.allowedOrigins)' : ''}`;
    return undefined;
  }

  private rebind(binding: Binding): void {
    if (binding === this.lastBinding) return; // the same object on every request of a listening app
    this.lastBinding = binding;
    const key = `${binding.host} ${binding.port ?? ''}`;
    if (key === this.boundKey) return;
    this.boundKey = key;
    this.loopbackBound = isLoopbackHost(binding.host);
    this.own = ownOrigins(binding);
    this.kinds.clear();
  }

  private kindOf(origin: string): Kind {
    let kind = this.kinds.get(origin);
    if (kind === undefined) {
      const o = browserOrigin(origin);
      kind = o === undefined ? 'foreign' : this.own.has(o) ? 'own' : this.allowed.has(o) ? 'listed' : 'foreign';
      if (this.kinds.size >= MEMO) this.kinds.clear();
      this.kinds.set(origin, kind);
    }
    return kind;
  }
}

function traitsOf(req: FastifyRequest): RouteTraits {
  const config = req.routeOptions.config as { origin?: string; role?: string } | undefined;
  return { strict: config?.origin === 'strict', privileged: config?.role === 'admin' || config?.role === 'approver' };
}

const MODEL_MESSAGE = 'The gateway refused this request\'s Host or Origin (a browser page of another origin, or a name that is not the gateway\'s). Do not retry it.';

/**
 * Adds the policy to every route of `app` (call it on the root instance, before any route):
 * synchronous, it is on every request's path.
 */
export function registerOriginPolicy(app: FastifyInstance, opts: { host: string; port: number; allowedOrigins: Iterable<string>; keyless: boolean }): void {
  const policy = new OriginPolicy(opts.allowedOrigins, opts.keyless);
  // Where the server listens, read once it does (a system call per request otherwise); before
  // that (inject), the configured address.
  let bound: Binding | undefined;
  const configured: Binding = { host: opts.host, port: opts.port === 0 ? undefined : opts.port };
  const binding = (): Binding => {
    if (bound) return bound;
    const a = app.server.address();
    if (a !== null && typeof a === 'object') return (bound = { host: a.address, port: a.port });
    return configured;
  };
  app.addHook('onRequest', (req, _reply, done) => {
    const problem = policy.problem(req.method, req.headers, binding(), () => traitsOf(req));
    done(problem ? new GatewayError('FORBIDDEN', problem, { modelMessage: MODEL_MESSAGE }) : undefined);
  });
}
