import { BlockList, isIP } from 'node:net';

/**
 * Addresses and names a URL guard keeps a model away from: everything that is not a globally
 * reachable unicast address (IANA special-purpose registries), and names that are internal by
 * definition. The ranges are checked with node:net's BlockList, the standard library's parser.
 */

const V4_SPECIAL: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local: cloud metadata lives here
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, with 255.255.255.255
];

/** Inside 2000::/3 (global unicast); everything outside it is refused anyway, save the two below. */
const V6_SPECIAL: readonly (readonly [string, number])[] = [
  ['2001::', 23], // IETF protocol assignments, Teredo (2001::/32) included
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation
];

const v4 = new BlockList();
for (const [net, bits] of V4_SPECIAL) v4.addSubnet(net, bits, 'ipv4');
const v6 = new BlockList();
for (const [net, bits] of V6_SPECIAL) v6.addSubnet(net, bits, 'ipv6');

/** The eight 16-bit groups of a valid IPv6 address (a zone id is dropped, a dotted tail converted). */
function groups(ip: string): number[] {
  let s = ip.toLowerCase().replace(/%.*$/, '');
  if (s.includes('.')) {
    const at = s.lastIndexOf(':') + 1;
    const [a = 0, b = 0, c = 0, d = 0] = s.slice(at).split('.').map(Number);
    s = `${s.slice(0, at)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = s.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail === undefined ? 0 : 8 - h.length - t.length;
  return [...h, ...Array<string>(fill).fill('0'), ...t].map((x) => parseInt(x, 16));
}

const quad = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

function v6Special(ip: string): boolean {
  const g = groups(ip);
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  // IPv4-mapped ::ffff:a.b.c.d and NAT64 64:ff9b::a.b.c.d reach the IPv4 address they embed.
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff) return v4.check(quad(g6, g7), 'ipv4');
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return v4.check(quad(g6, g7), 'ipv4');
  // 6to4 2002:AABB:CCDD::/48 routes to the IPv4 address AA.BB.CC.DD.
  if (g0 === 0x2002 && v4.check(quad(g1, g2), 'ipv4')) return true;
  // Outside global unicast: ::, ::1, IPv4-compatible ::/96, 64:ff9b:1::/48, 100::/64, ULA fc00::/7,
  // link-local fe80::/10, site-local fec0::/10, multicast ff00::/8, and every unassigned block.
  if ((g0 & 0xe000) !== 0x2000) return true;
  return v6.check(ip.replace(/%.*$/, ''), 'ipv6');
}

/** True for an IP address (v4 or v6, brackets allowed) that is not a public unicast address. */
export function isSpecialAddress(ip: string): boolean {
  const a = ip.replace(/^\[|\]$/g, '');
  const kind = isIP(a.replace(/%.*$/, ''));
  if (kind === 4) return v4.check(a, 'ipv4');
  if (kind === 6) return v6Special(a);
  return false;
}

/**
 * A resolver's answer that may not be connected to: special, or not an IP address at all (fail
 * closed: '127.000.000.001' or '2130706433' from a custom resolver is no address to judge).
 */
export function isUnsafeAnswer(address: string): boolean {
  return isIP(address.replace(/%.*$/, '')) === 0 || isSpecialAddress(address);
}

/**
 * Internal by definition: a single label (resolved through search domains to internal hosts:
 * `metadata`, `kubernetes`), `localhost` and `*.localhost` (loopback, RFC 6761), mDNS `*.local`,
 * `*.internal` (reserved for private use, cloud metadata), `*.home.arpa` (RFC 8375), and the
 * private-use names of RFC 6762 appendix G (`lan`, `intranet`, `corp`, `home`, `private`) and
 * `localdomain`.
 */
const INTERNAL_SUFFIXES = ['localhost', 'localdomain', 'local', 'internal', 'home.arpa', 'lan', 'intranet', 'corp', 'home', 'private'];

export function isInternalName(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  if (!h.includes('.')) return true;
  return INTERNAL_SUFFIXES.some((s) => h === s || h.endsWith(`.${s}`));
}

/** A private, loopback, link-local (cloud metadata), special-purpose address, or an internal name. */
export function isPrivateHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '');
  return isIP(h.replace(/%.*$/, '')) !== 0 ? isSpecialAddress(h) : isInternalName(h);
}
