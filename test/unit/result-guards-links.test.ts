import { describe, expect, it } from 'vitest';
import { scanLinks } from '../../src/guards/result/links.js';

const opts = { allowHosts: ['*.example.com', 'example.org'], action: 'defang' as const };
const defang = (text: string) => scanLinks(text, opts);

describe('links guard', () => {
  it('replaces an image to a foreign host by a placeholder (it would be fetched as the answer renders)', () => {
    expect(defang('see ![chart](https://evil.test/p.png?q=the+conversation) here').text).toBe('see [image removed: evil.test] here');
    expect(defang('<img alt="x" src="https://evil.test/a.gif?d=1">').text).toBe('[image removed: evil.test]');
    expect(defang('<iframe src=//evil.test/x></iframe>').text).toBe('[image removed: evil.test]</iframe>');
  });

  it('breaks a link to a foreign host: text kept, URL neither clickable nor fetchable, query dropped', () => {
    expect(defang('[click](https://evil.test/login?token=abc#x)').text).toBe('click (hxxps://evil[.]test/login…)');
    expect(defang('<https://evil.test/a>').text).toBe('hxxps://evil[.]test/a');
    expect(defang('<a href="http://evil.test/">here</a>').text).toBe('[hxxp://evil[.]test/]here</a>');
    expect(defang('[ref]: https://evil.test/x').text).toBe('[ref]: hxxps://evil[.]test/x');
  });

  it('lets allowed hosts, relative URLs and mailto through', () => {
    for (const t of ['![a](https://cdn.example.com/a.png)', '[b](https://example.org/x)', '[c](./api.md)', '![d](images/arch.png)', '[e](/docs)', '[f](mailto:a@b.c)', '<a href="#top">top</a>']) {
      expect(defang(t).findings, t).toEqual([]);
    }
    // `*.example.com` is below example.com, not example.com itself
    expect(defang('![a](https://example.com/a.png)').findings).toHaveLength(1);
  });

  it('reads the URL as a browser does: userinfo, backslashes, case, entities, escapes, IDNs, protocol-relative', () => {
    for (const t of [
      '![x](https://cdn.example.com@evil.test/a)',
      '![x](HTTPS://EVIL.TEST/a)',
      '![x](//evil.test/a)',
      '<img src="&#104;ttps://evil.test/a">',
      '<img src="https&colon;//evil.test/a">',
      '![x](https\\://evil.test/a)',
      '![x](<https://evil.test/a b>)',
      '![x](https://evil.test/wiki/A_(b))',
      '![x](https://exаmple.org/a)', // Cyrillic а: xn--exmple-4nf.org, not example.org
    ]) {
      expect(defang(t).findings, t).toHaveLength(1);
    }
  });

  it('never allows javascript:, data: or file: URLs', () => {
    expect(defang('[x](javascript:alert(1))').text).toBe('x ([javascript URL removed])');
    expect(defang('![x](data:image/png;base64,iVBORw0KGgo=)').text).toBe('[image removed: data URL]');
    expect(defang('<a href="file:///etc/passwd">x</a>').findings).toHaveLength(1);
  });

  it('judges an image inside a link, and a link around an image', () => {
    expect(defang('[![badge](https://evil.test/b.svg)](https://ci.example.com/x)').text).toBe('[[image removed: evil.test]](https://ci.example.com/x)');
    expect(defang('[![badge](https://img.example.com/b.svg)](https://evil.test/x)').text).toBe('![badge](https://img.example.com/b.svg) (hxxps://evil[.]test/x)');
  });

  it('flag and refuse leave the text and report UTF-8 offsets', () => {
    const text = 'é ![x](https://evil.test/a)';
    const r = scanLinks(text, { action: 'flag' });
    expect(r.text).toBe(text);
    expect(r.findings).toEqual([{ kind: 'link', action: 'flag', count: 1, offsets: [[3, 28]] }]);
    expect(scanLinks(text, { action: 'refuse' }).findings[0]?.action).toBe('refuse');
  });

  it('returns on hostile input', () => {
    for (const t of ['['.repeat(100_000), '!['.repeat(100_000), '[a]('.repeat(100_000), '[x](http://' + 'a.'.repeat(500_000) + ')', '<img src='.repeat(110_000), '<a ' + 'a'.repeat(1 << 20), '<'.repeat(1 << 20), '[a]('.repeat(50_000) + 'https://evil.test/' + ')'.repeat(50_000)]) {
      expect(typeof defang(t).text).toBe('string');
    }
  });
});
