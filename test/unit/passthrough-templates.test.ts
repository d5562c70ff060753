import { UriTemplate } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { templateRoute } from '../../src/mcp-server/passthrough-templates.js';
import { gatewayTemplate, parseGatewayUri } from '../../src/mcp-server/uris.js';

// (a) A URI a client expands from a template /mcp lists goes to the server's own template, with
// the values as the client encoded them: the URI the server's template gives for the same values.

/** What a client does: expands the template /mcp lists, with the SDK's UriTemplate. */
const expandListed = (prefix: string, template: string, vars: Record<string, string>) => new UriTemplate(gatewayTemplate(prefix, template)).expand(vars);
/** What the server's own template gives for the same values. */
const expandOwn = (template: string, vars: Record<string, string>) => new UriTemplate(template).expand(vars);

describe('template routes', () => {
  it.each([
    ['simple', 'demo://resource/dynamic/text/{resourceId}', { resourceId: '7' }],
    ['a value with a space and a slash (kept encoded, not a path)', 'demo://resource/dynamic/text/{resourceId}', { resourceId: 'a b/c' }],
    ['reserved expansion', 'file:///docs/{+path}', { path: 'sub/dir/file name.txt' }],
    ['path segment', 'repo://x{/name}', { name: 'readme' }],
    ['label', 'repo://x/file{.ext}', { ext: 'md' }],
    ['query', 'search://items{?q,page}', { q: 'red shoes', page: '2' }],
    ['two variables', 'users://{org}/{user}/profile', { org: 'acme', user: 'ada' }],
  ])('%s: the server gets what its own template gives, prefixed or not', (_what, template, vars) => {
    for (const prefix of ['every_thing', '']) {
      const uri = expandListed(prefix, template, vars);
      expect(templateRoute(template, prefix)(uri)).toBe(expandOwn(template, vars));
    }
  });

  it('decoding the whole gateway URI would lose an encoded slash; the route keeps it', () => {
    const template = 'demo://resource/dynamic/text/{resourceId}';
    const uri = expandListed('ev', template, { resourceId: 'a/b' });
    expect(parseGatewayUri(uri)?.upstream).toBe('demo://resource/dynamic/text/a/b'); // not what the server's template would give
    expect(templateRoute(template, 'ev')(uri)).toBe('demo://resource/dynamic/text/a%2Fb');
  });

  it('another prefix, another server\'s scheme or text outside the template is no match', () => {
    const route = templateRoute('demo://resource/dynamic/text/{id}', 'ev');
    expect(route(expandListed('other', 'demo://resource/dynamic/text/{id}', { id: '1' }))).toBeUndefined();
    expect(route('demo://resource/dynamic/text/1')).toBeUndefined(); // the unprefixed form of a prefixed server's URI
    expect(route(`${expandListed('ev', 'demo://resource/dynamic/text/{id}', { id: '1' })}/more`)).toBeUndefined();
    expect(route('toolgate://ev/demo%3A%2F%2Fresource%2Fdynamic%2Ftext%2F')).toBeUndefined(); // an empty value
    const plain = templateRoute('demo://resource/dynamic/text/{id}', '');
    expect(plain('toolgate://ev/demo%3A%2F%2Fresource%2Fdynamic%2Ftext%2F1')).toBeUndefined();
    expect(plain('demo://resource/dynamic/text/1')).toBe('demo://resource/dynamic/text/1');
  });

  it('regular-expression characters in a template are literal text', () => {
    const route = templateRoute('x://a.b+(c)/{id}', '');
    expect(route('x://a.b+(c)/1')).toBe('x://a.b+(c)/1');
    expect(route('x://aXb+(c)/1')).toBeUndefined();
  });
});

describe('template routes on hostile URIs', () => {
  // Templates whose regular expression would backtrack: several runs, adjacent runs.
  const TEMPLATES = ['x://{a}{b}{c}{d}{e}{f}{g}{h}q', 'x://{+a}x{+b}y{+c}z{+d}w', 'x://{a}x{b}y{c}z{d}w{e}v', 'x://f{/p*}{.e}{?q,r}{#h}', 'x://{a,b}/{c*}'];

  it.each(TEMPLATES)('%s: a 60,000-character URI is answered at once, and one over 65,536 is no match', (template) => {
    const route = templateRoute(template, '');
    // A backtracking regular expression takes hours on these (the test's timeout catches it); this matcher answers.
    expect(route(`x://${'x'.repeat(60_000)}`)).toBeUndefined();
    expect(route(`x://${'a,'.repeat(30_000)}`)).toBeUndefined();
    expect(route(`x://${'a'.repeat(65_600)}q`)).toBeUndefined();
  });

  it('matches exactly where the SDK\'s UriTemplate matches (random URIs over the templates\' characters)', () => {
    const alphabet = ['a', 'x', 'y', 'q', '/', ',', '&', '=', '?', '#', '.', 'p', 'r', 'e', 'h', 'f'];
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    let matched = 0;
    for (const template of TEMPLATES) {
      const sdk = new UriTemplate(template);
      const route = templateRoute(template, '');
      for (let k = 0; k < 3000; k++) {
        // The template with each expression replaced by random text (near misses and matches alike).
        const noise = () => Array.from({ length: rand(6) }, () => alphabet[rand(alphabet.length)]).join('');
        const uri = template.replace(/\{[^}]*\}/g, (expr) => (rand(3) === 0 ? noise() : `${expr[1] && '+#./?&'.includes(expr[1]) && expr[1] !== '+' ? expr[1] : ''}${noise()}`));
        const ours = route(uri);
        expect(ours !== undefined, `${template} on ${uri}`).toBe(sdk.match(uri) !== null);
        if (ours !== undefined) {
          expect(ours).toBe(uri); // without a prefix the server gets the URI as written
          matched++;
        }
      }
    }
    expect(matched).toBeGreaterThan(100); // the comparison saw matches, not only misses
  });
});
