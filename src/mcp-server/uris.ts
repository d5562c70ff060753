/**
 * Resource URIs as /mcp lists them. A server's URI `U` is served as
 *
 *     toolgate://<prefix>/<percent-encoded U>
 *
 * (`<prefix>` the server file's `prefix`, by default the server name, as for its tools). Why this
 * form: a URI scheme may not hold `_` (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )) but
 * server names may, so the server goes in the authority, where `_` (unreserved) is valid and WHATWG
 * `new URL()` keeps it as an opaque host; one fixed scheme is also what a client can tell apart.
 * The upstream URI is encoded with encodeURIComponent into the path, so any URI (its own scheme,
 * query, fragment, `%` triplets) round-trips: decodeURIComponent of everything after
 * `toolgate://<prefix>/` gives it back, byte for byte. A server with `prefix: ""` keeps its URIs
 * as they are (routed by which server listed them).
 *
 * A template is rewritten the same way: its literal parts percent-encoded, its `{…}` expressions
 * kept, so a client expanding it gets a gateway URI that decodes to the URI the server's own
 * template would give (a simple `{var}` expansion encodes reserved characters itself; `{+var}`,
 * `{/var}`, `{?var}` ones leave `/`, `?`, `&`, `=` as they are, which decode to themselves).
 */
export const GATEWAY_SCHEME = 'toolgate';
const PREFIXED = /^toolgate:\/\/([a-z0-9_-]+(?:\.[a-z0-9_-]+)*)\/(.*)$/s;

/** The URI /mcp lists for a server's URI. */
export function gatewayUri(prefix: string, upstream: string): string {
  return prefix === '' ? upstream : `${GATEWAY_SCHEME}://${prefix}/${encodeURIComponent(upstream)}`;
}

/** A `toolgate://<prefix>/…` URI split into its prefix and the server's own URI; undefined for any other (or undecodable) one. */
export function parseGatewayUri(uri: string): { prefix: string; upstream: string } | undefined {
  const m = PREFIXED.exec(uri);
  if (!m) return undefined;
  try {
    return { prefix: m[1] as string, upstream: decodeURIComponent(m[2] as string) };
  } catch {
    return undefined; // a malformed % triplet
  }
}

/** A URI in the gateway's own scheme (listed by no server without a prefix: that would be ambiguous). */
export function inGatewayScheme(uri: string): boolean {
  return uri.toLowerCase().startsWith(`${GATEWAY_SCHEME}:`);
}

/** The uriTemplate /mcp lists for a server's template. */
export function gatewayTemplate(prefix: string, template: string): string {
  if (prefix === '') return template;
  const parts = template.split(/(\{[^{}]*\})/);
  return `${GATEWAY_SCHEME}://${prefix}/` + parts.map((p) => (p.startsWith('{') && p.endsWith('}') ? p : encodeURIComponent(p))).join('');
}

/** A dot segment in the URI's path, also percent-encoded (`%2e%2e`, twice-encoded `%252e`): no server is asked to read it. */
export function hasTraversal(uri: string): boolean {
  let s = uri;
  for (let i = 0; i < 3; i++) {
    if (/(^|[/\\])\.\.?([/\\?#]|$)/.test(s)) return true;
    let next: string;
    try {
      next = decodeURIComponent(s);
    } catch {
      return /%2e/i.test(s);
    }
    if (next === s) return false;
    s = next;
  }
  return /%2e/i.test(s) || /(^|[/\\])\.\.?([/\\?#]|$)/.test(s);
}
