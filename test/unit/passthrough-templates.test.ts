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
