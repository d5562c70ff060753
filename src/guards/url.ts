import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { globToRegExp } from '../auth/caller.js';
import { isWellFormed } from '../util/unicode.js';
import { isInternalName, isSpecialAddress, isUnsafeAnswer } from './addresses.js';

export { isPrivateHost } from './addresses.js';

/** Every address a name resolves to (dns.lookup with `all: true`). */
export type LookupAll = (hostname: string) => Promise<readonly { readonly address: string; readonly family: number }[]>;

export const systemLookup: LookupAll = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface UrlPolicy {
  /** Host globs (on the lowercase, punycode host); undefined or [] means any public host. */
  readonly hosts: readonly string[] | undefined;
  readonly allowPrivate: boolean;
  /** Resolve the name at call time and refuse it when any address is private or special. */
  readonly resolve: boolean;
}

const MAX_URL = 8192;
const RESOLVE_TIMEOUT_MS = 5000;
/** Whitespace, controls and invisible format characters: WHATWG drops some (tab, CR, LF) silently. */
const INVISIBLE = /[\u0000-\u0020\u007f-\u00a0\u00ad\u034f\u061c\u115f\u1160\u1680\u17b4\u17b5\u180b-\u180f\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\u3164\ufe00-\ufe0f\ufeff\uffa0]/;
const ASCII = /^[\x21-\x7e]*$/;
const DNS_NAME = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$/;

type Parsed = { readonly url: URL } | { readonly problem: string };

/**
 * The URL as the WHATWG parser reads it, or why the raw text could be read another way by another
 * parser (RFC 3986 libraries, curl, Go, Python): the text must be unambiguous before it is parsed,
 * and the host the parser found must be the host as written, up to letter case and IDNA. The path,
 * query and fragment may be re-serialized (percent-encoding, dot segments, an empty path as '/'):
 * that does not change where the request goes, and the serialized form is what is sent.
 */
export function strictUrl(raw: string): Parsed {
  const no = (problem: string): Parsed => ({ problem });
  if (raw.length > MAX_URL) return no(`the URL is longer than ${MAX_URL} characters`);
  if (!isWellFormed(raw)) return no('the URL is not well-formed Unicode');
  if (INVISIBLE.test(raw)) return no('the URL holds whitespace, control or invisible characters (parsers drop some silently)');
  if (raw.includes('\\')) return no('the URL holds a backslash (parsers disagree on whether it ends the host)');
  if (/%00/.test(raw)) return no('the URL holds an encoded NUL (%00)');
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(raw);
  if (!scheme) return no('not an absolute URL');
  const name = (scheme[1] as string).toLowerCase();
  if (name !== 'http' && name !== 'https') return no(`scheme ${name}: is not allowed`);
  if (raw.slice(scheme[0].length, scheme[0].length + 2) !== '//') return no(`an ${name} URL must start with '${name}://'`);
  const rest = raw.slice(scheme[0].length + 2);
  const end = rest.search(/[/?#]/);
  const authority = end < 0 ? rest : rest.slice(0, end);
  if (authority.includes('@')) return no("credentials in URLs are not allowed (an '@' before the path)");
  if (authority.includes('%')) return no('percent-escapes in the host are not allowed');
  const hp = hostAndPort(authority);
  if ('problem' in hp) return hp;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return no('not a valid URL');
  }
  const host = hostProblem(hp.host, url.hostname);
  return host ? no(host) : { url };
}

function hostAndPort(authority: string): { host: string; port: string | undefined } | { problem: string } {
  let host = authority;
  let port: string | undefined;
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    if (close < 0) return { problem: "an unclosed '[' in the host" };
    host = authority.slice(0, close + 1);
    const after = authority.slice(close + 1);
    if (after !== '' && !after.startsWith(':')) return { problem: 'text after the IPv6 address in the host' };
    if (after !== '') port = after.slice(1);
  } else {
    const colon = authority.indexOf(':');
    if (colon >= 0) {
      if (authority.includes(':', colon + 1)) return { problem: "more than one ':' in the host" };
      host = authority.slice(0, colon);
      port = authority.slice(colon + 1);
    }
  }
  if (host === '') return { problem: 'the URL has no host' };
  if (port !== undefined && (!/^[0-9]{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535)) {
    return { problem: `the port '${port}' is not a number from 1 to 65535` };
  }
  return { host, port };
}

/** Why the parsed host is not the written one (beyond case and IDNA), or undefined. */
function hostProblem(written: string, parsed: string): string | undefined {
  if (written.startsWith('[')) return undefined; // an IPv6 literal, serialized in its canonical form
  if (isIP(parsed) === 4) {
    return written === parsed ? undefined : `the host ${written} is an IPv4 address in another form (${parsed}): write it as four decimal numbers`;
  }
  if (!DNS_NAME.test(parsed)) return `the host ${parsed} is not a DNS name`;
  if (ASCII.test(written)) return written.toLowerCase() === parsed ? undefined : `the host ${written} is read as ${parsed}`;
  const a = written.split('.');
  const b = parsed.split('.');
  if (a.length !== b.length) return `the host ${written} uses a label separator other than '.'`;
  const lookalike = a.some((label, i) => (ASCII.test(label) ? label.toLowerCase() !== b[i] : !b[i]?.startsWith('xn--')));
  return lookalike ? `the host ${written} is written with look-alike characters (read as ${parsed})` : undefined;
}

/** The hostname as judged: lowercase punycode, no brackets, no trailing dot. */
function judgedHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
}

/**
 * Why a URL argument is refused, or undefined when it may be fetched, judged without DNS: one
 * reading (above), http(s), no credentials, a host on the allow-list when there is one, and no
 * private, special or internal host unless allowed.
 */
export function staticProblem(url: URL, policy: UrlPolicy): string | undefined {
  if (url.username || url.password) return 'credentials in URLs are not allowed';
  const host = judgedHost(url);
  const shown = url.hostname;
  const hosts = policy.hosts;
  if (hosts && hosts.length > 0 && !hosts.some((g) => globToRegExp(g.toLowerCase()).test(host) || globToRegExp(g.toLowerCase()).test(shown))) {
    return `host ${shown} is not on the allow-list (${hosts.join(', ')})`;
  }
  if (policy.allowPrivate) return undefined;
  if (isIP(host) !== 0) return isSpecialAddress(host) ? `host ${shown} is a private, loopback, metadata or special-purpose address` : undefined;
  return isInternalName(host) ? `host ${shown} is a local or internal name (loopback, metadata or private network)` : undefined;
}

/** Why the URL's name is refused once resolved (any address private or special), or undefined. */
export async function resolvedProblem(url: URL, lookup: LookupAll): Promise<string | undefined> {
  const host = judgedHost(url);
  if (isIP(host) !== 0) return undefined; // a literal address was judged as written
  let timer: NodeJS.Timeout | undefined;
  try {
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error('timeout'), { code: 'ETIMEOUT' })), RESOLVE_TIMEOUT_MS);
    });
    const addrs = await Promise.race([lookup(host), late]);
    if (addrs.length === 0) return `host ${host} does not resolve`;
    if (addrs.some((a) => isUnsafeAnswer(a.address))) return `host ${host} resolves to a private, loopback, metadata or special-purpose address`;
    return undefined;
  } catch (e) {
    return `host ${host} does not resolve (${(e as NodeJS.ErrnoException).code ?? 'error'})`;
  } finally {
    clearTimeout(timer);
  }
}

/** The URL to send (its WHATWG serialization) or why it is refused. */
export async function checkUrl(raw: string, policy: UrlPolicy, lookup: LookupAll = systemLookup): Promise<{ href: string } | { problem: string }> {
  const parsed = strictUrl(raw);
  if ('problem' in parsed) return parsed;
  const problem = staticProblem(parsed.url, policy) ?? (policy.resolve && !policy.allowPrivate ? await resolvedProblem(parsed.url, lookup) : undefined);
  return problem ? { problem } : { href: parsed.url.href };
}

/** The static verdict alone, as text: undefined when allowed (kept for callers that need no DNS). */
export function urlProblem(raw: string, allowHosts: readonly string[] | undefined, allowPrivate: boolean): string | undefined {
  const parsed = strictUrl(raw);
  return 'problem' in parsed ? parsed.problem : staticProblem(parsed.url, { hosts: allowHosts, allowPrivate, resolve: false });
}
