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

/**
 * The longest URI matched. Far above any real resource URI; the matcher is linear in it, so the
 * bound only keeps one request's work and memory small.
 */
const MAX_URI = 65_536;
const EXPR = /(\{[^{}]*\})/;

const isExpr = (part: string) => part.startsWith('{') && part.endsWith('}');

/**
 * What a URI is matched against: literal text, or a run of characters of one class. A run with
 * `commas` is a list of such runs joined by single commas (an exploded or multi-name expression).
 */
type Token = { readonly lit: string } | { readonly run: (c: string) => boolean; readonly commas: boolean };

const ANY = () => true;
const SEGMENT_CHAR = (c: string) => c !== '/' && c !== ',';
const QUERY_VALUE_CHAR = (c: string) => c !== '&';

/** The tokens one expression matches, as the SDK's UriTemplate matches it (RFC 6570 level 1 and the operators `+ # . / ? &`). */
function expressionTokens(expr: string): Token[] {
  const op = /^[+#./?&]/.exec(expr)?.[0] ?? '';
  const names = expr
    .slice(op.length)
    .split(',')
    .map((n) => n.replace('*', '').trim())
    .filter((n) => n.length > 0);
  const segment: Token = { run: SEGMENT_CHAR, commas: expr.includes('*') || names.length > 1 };
  switch (op) {
    case '+':
      return [{ run: ANY, commas: false }];
    case '#':
      return [{ lit: '#' }, { run: ANY, commas: false }];
    case '.':
    case '/':
      return [{ lit: op }, segment];
    case '?':
    case '&':
      return names.flatMap((n, i): Token[] => [{ lit: `${i === 0 ? op : '&'}${n}=` }, { run: QUERY_VALUE_CHAR, commas: false }]);
    default:
      return [segment];
  }
}

/**
 * Matches `uri` against `tokens` as a backtracking regular expression with greedy runs would (each
 * run as long as the rest still matches), in time linear in the URI: `can[t][i]` says whether
 * tokens t… match uri[i…], filled from the end. A regular expression over templates with several
 * runs backtracks polynomially (exponentially for adjacent ones: `{a}{b}{c}…`), so a client's long
 * URI could hold the event loop for seconds; this cannot. Returns each token's start, or undefined.
 */
function matchTokens(tokens: readonly Token[], uri: string): number[] | undefined {
  const n = uri.length;
  const can = tokens.map(() => new Uint8Array(n + 2));
  can.push(new Uint8Array(n + 2));
  (can[tokens.length] as Uint8Array)[n] = 1;
  for (let t = tokens.length - 1; t >= 0; t--) {
    const token = tokens[t] as Token;
    const here = can[t] as Uint8Array;
    const next = can[t + 1] as Uint8Array;
    for (let i = n; i >= 0; i--) {
      if ('lit' in token) here[i] = uri.startsWith(token.lit, i) && next[i + token.lit.length] === 1 ? 1 : 0;
      else if (i < n && token.run(uri[i] as string)) {
        const ends = next[i + 1] === 1 || here[i + 1] === 1 || (token.commas && uri[i + 1] === ',' && here[i + 2] === 1);
        here[i] = ends ? 1 : 0;
      }
    }
  }
  if ((can[0] as Uint8Array)[0] !== 1) return undefined;
  const starts: number[] = [];
  let i = 0;
  tokens.forEach((token, t) => {
    starts.push(i);
    if ('lit' in token) {
      i += token.lit.length;
      return;
    }
    // The longest run from i after which the rest matches (one exists: can[t][i] is set).
    const next = can[t + 1] as Uint8Array;
    let best = i + 1;
    for (let j = i + 1; j <= n; j++) {
      const c = uri[j - 1] as string;
      const valid = token.run(c) || (token.commas && c === ',' && uri[j - 2] !== ',' && j - 1 > i);
      if (!valid) break;
      if (token.run(c) && next[j] === 1) best = j;
    }
    i = best;
  });
  starts.push(i);
  return starts;
}

/** The route of one server template under a prefix ('' for a server without one: its URIs as they are). */
export function templateRoute(serverTemplate: string, prefix: string): TemplateRoute {
  const parts = serverTemplate.split(EXPR).filter((p) => p !== '');
  const head = prefix === '' ? '' : `${GATEWAY_SCHEME}://${prefix}/`;
  const tokens: Token[] = head === '' ? [] : [{ lit: head }];
  /** For each part, the index of its first token and one past its last. */
  const spans = parts.map((part) => {
    const from = tokens.length;
    if (isExpr(part)) tokens.push(...expressionTokens(part.slice(1, -1)));
    else tokens.push({ lit: prefix === '' ? part : encodeURIComponent(part) });
    return [from, tokens.length] as const;
  });
  return (uri) => {
    if (uri.length > MAX_URI) return undefined;
    const starts = matchTokens(tokens, uri);
    if (!starts) return undefined;
    return parts.map((part, p) => {
      const [from, to] = spans[p] as readonly [number, number];
      return isExpr(part) ? uri.slice(starts[from], starts[to]) : part;
    }).join('');
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
