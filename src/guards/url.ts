import { isIP } from 'node:net';
import { globToRegExp } from '../auth/caller.js';

const BLOCKED_NAMES = /^(localhost|localhost\.localdomain|ip6-localhost|metadata|metadata\.google\.internal|instance-data|.*\.internal|.*\.local)$/i;

function ipv4Private(ip: string): boolean {
  const [a = 0, b = 0] = ip.split('.').map(Number);
  return (
    a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127) || (a === 198 && (b === 18 || b === 19)) || a >= 224
  );
}

function ipv6Private(ip: string): boolean {
  const v = ip.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(v);
  if (mapped) return ipv4Private(mapped[1] as string);
  const hexMapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(v);
  if (hexMapped) {
    const n = (parseInt(hexMapped[1] as string, 16) << 16) | parseInt(hexMapped[2] as string, 16);
    return ipv4Private([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.'));
  }
  return v === '::' || v === '::1' || /^f[cd]/.test(v) || /^fe[89ab]/.test(v) || /^ff/.test(v);
}

/** A private, loopback, link-local (cloud metadata) or otherwise internal address or name. */
export function isPrivateHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '');
  const kind = isIP(h);
  if (kind === 4) return ipv4Private(h);
  if (kind === 6) return ipv6Private(h);
  return BLOCKED_NAMES.test(h.replace(/\.$/, ''));
}

/**
 * Why a URL argument is refused, or undefined when it may be fetched: http(s) only, no credentials,
 * a host on the allow-list when there is one, and no internal address unless allowed. The WHATWG
 * parser has already turned decimal, octal and hex IPv4 forms into dotted quads.
 */
export function urlProblem(raw: string, allowHosts: readonly string[] | undefined, allowPrivate: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `scheme ${url.protocol} is not allowed`;
  if (url.username || url.password) return 'credentials in URLs are not allowed';
  const host = url.hostname.toLowerCase();
  if (allowHosts && allowHosts.length > 0 && !allowHosts.some((g) => globToRegExp(g.toLowerCase()).test(host))) {
    return `host ${host} is not on the allow-list (${allowHosts.join(', ')})`;
  }
  if (!allowPrivate && isPrivateHost(host)) return `host ${host} is a private, loopback or metadata address`;
  return undefined;
}
