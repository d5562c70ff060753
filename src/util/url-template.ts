import { GatewayError } from '../errors.js';
import { asText, lookup, render, type Template } from './template.js';

/**
 * A URL template rendered for a request. Arguments are URL-encoded (encodeURIComponent: '/', '?',
 * '#', '&' and '%' cannot leave their place), but '.' is not encoded, and no encoding helps: WHATWG
 * URL parsing and most servers resolve '.', '..', '%2e' and '.%2e' segments alike. So a rendered
 * path with a dot segment is refused, never normalized: the path the gateway built is the one sent.
 */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/** The path of an absolute URL (after scheme and authority, before '?' or '#'). */
function pathOf(url: string): string {
  const start = url.indexOf('//');
  const slash = url.indexOf('/', start < 0 ? 0 : start + 2);
  if (slash < 0) return '';
  const end = url.slice(slash).search(/[?#]/);
  return end < 0 ? url.slice(slash) : url.slice(slash, slash + end);
}

export function hasDotSegment(url: string): boolean {
  return pathOf(url).split('/').some((s) => DOT_SEGMENT.test(s));
}

/** Load time: a URL template whose own path has a dot segment (with every placeholder as 'x'). */
export function urlTemplateProblem(t: Template): string | undefined {
  return hasDotSegment(render(t, {}, () => 'x')) ? "the URL path has a '.' or '..' segment, which would be resolved away" : undefined;
}

/**
 * The URL for a request. A value in the path that has a '.' or '..' component once split at '/' or
 * '\\' is refused too: it is encoded into one segment, but servers that decode %2F before routing
 * would climb with it.
 */
export function renderUrl(t: Template, args: Readonly<Record<string, unknown>>): string {
  const culprits: string[] = [];
  let inPath = true;
  for (const p of t.parts) {
    if (typeof p === 'string') {
      if (/[?#]/.test(p)) inPath = false;
    } else if (inPath && asText(lookup(args, p.path)).split(/[/\\]/).some((c) => c === '.' || c === '..')) {
      culprits.push(`/${p.path.join('/')}`);
    }
  }
  let href: string;
  try {
    href = render(t, args, encodeURIComponent);
  } catch (e) {
    if (!(e instanceof URIError)) throw e;
    // A lone surrogate ("\ud800" is valid JSON) has no UTF-8 form to percent-encode.
    throw new GatewayError('INVALID_ARGUMENTS', 'an argument in the URL of the backend is not well-formed Unicode', {
      modelMessage: 'An argument holds a lone surrogate (not well-formed Unicode), which cannot be put in a URL; send well-formed text.',
      details: [{ path: '/', message: 'not well-formed Unicode (a lone surrogate)' }],
    });
  }
  if (culprits.length === 0 && !hasDotSegment(href)) return href;
  const message = "a '.' or '..' path segment would climb out of the tool's URL path";
  throw new GatewayError('INVALID_ARGUMENTS', 'an argument makes a dot segment in the URL path of the backend', {
    modelMessage: "An argument is '.' or '..' (or holds such a path part), which is not allowed in a URL path; use a real name or id.",
    details: (culprits.length > 0 ? culprits : ['/']).map((path) => ({ path, message })),
  });
}
