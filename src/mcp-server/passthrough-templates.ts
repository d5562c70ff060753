import { GATEWAY_SCHEME } from './uris.js';

/**
 * Which server template a URI a client expanded from a listed template comes from, and the URI
 * the server's own template would have given for the same values.
 *
 * A client expands the template /mcp lists (gatewayTemplate: literal text percent-encoded, `{…}`
 * expressions kept), so the URI is matched against that listed form, as the SDK's UriTemplate
 * matches (RFC 6570 level 1 and the operators `+ # . / ? &`, each expression one run of
 * characters). The server's URI is its template's literal text with each expression's matched
 * text put back as the client wrote it: a value the client encoded (`a%20b`, `a%2Fb`) reaches
 * the server encoded, exactly as the server's template would expand it, which decoding the whole
 * gateway URI could not give (it would turn `%2F` into a path separator).
 */
export type TemplateRoute = (uri: string) => string | undefined;

/** The SDK's bounds: no template or URI longer is matched (and no regular expression is built over one). */
const MAX_URI = 1_000_000;
const EXPR = /(\{[^{}]*\})/;

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const isExpr = (part: string) => part.startsWith('{') && part.endsWith('}');

/** The text one expression matches (without a capture group), as the SDK's partToRegExp. */
function expressionPattern(expr: string): string {
  const op = /^[+#./?&]/.exec(expr)?.[0] ?? '';
  const names = expr
    .slice(op.length)
    .split(',')
    .map((n) => n.replace('*', '').trim())
    .filter((n) => n.length > 0);
  const segment = expr.includes('*') || names.length > 1 ? '[^/,]+(?:,[^/,]+)*' : '[^/,]+';
  switch (op) {
    case '+':
      return '.+';
    case '#':
      return '#.+';
    case '.':
      return `\\.${segment}`;
    case '/':
      return `/${segment}`;
    case '?':
    case '&':
      return names.map((n, i) => `${i === 0 ? `\\${op}` : '&'}${esc(n)}=[^&]+`).join('');
    default:
      return segment;
  }
}

/** The route of one server template under a prefix ('' for a server without one: its URIs as they are). */
export function templateRoute(serverTemplate: string, prefix: string): TemplateRoute {
  const parts = serverTemplate.split(EXPR).filter((p) => p !== '');
  const head = prefix === '' ? '' : `${GATEWAY_SCHEME}://${prefix}/`;
  let source = `^${esc(head)}`;
  for (const part of parts) source += isExpr(part) ? `(${expressionPattern(part.slice(1, -1))})` : esc(prefix === '' ? part : encodeURIComponent(part));
  const re = new RegExp(`${source}$`, 's');
  return (uri) => {
    if (uri.length > MAX_URI) return undefined;
    const m = re.exec(uri);
    if (!m) return undefined;
    let group = 1;
    return parts.map((part) => (isExpr(part) ? (m[group++] as string) : part)).join('');
  };
}

const memo = new WeakMap<object, { prefix: string; route: TemplateRoute }>();

/** templateRoute, kept per listed template object (the catalog keeps those until the list changes). */
export function routeOf(template: { uriTemplate: string }, prefix: string): TemplateRoute {
  const hit = memo.get(template);
  if (hit && hit.prefix === prefix) return hit.route;
  const route = templateRoute(template.uriTemplate, prefix);
  memo.set(template, { prefix, route });
  return route;
}
