import { describe, expect, it } from 'vitest';
import { audienceNames } from '../../src/auth/upstream/passthrough.js';

/** Red team, issue 23: look-alike audiences never name an upstream for passthrough (each held on dd5365e). */
describe('red team: passthrough audience look-alikes', () => {
  const up = new URL('https://api.example.com/v1/items');

  it('names the upstream by origin and path prefix only', () => {
    expect(audienceNames('https://api.example.com', up)).toBe(true);
    expect(audienceNames('https://api.example.com:443/v1', up)).toBe(true); // the default port is the same origin
    expect(audienceNames('HTTPS://API.EXAMPLE.COM/v1/', up)).toBe(true); // scheme and host are case-insensitive
  });

  it.each([
    ['userinfo', 'https://api.example.com@evil.example/v1'],
    ['userinfo on the right host', 'https://evil.example@api.example.com/v1'],
    ['another port', 'https://api.example.com:8443/v1'],
    ['plain http', 'http://api.example.com/v1'],
    ['a suffix host', 'https://api.example.com.evil.example/v1'],
    ['a trailing-dot host', 'https://api.example.com./v1'],
    ['an IDN look-alike', 'https://аpi.example.com/v1'],
    ['a sibling path', 'https://api.example.com/v10'],
    ['a deeper path', 'https://api.example.com/v1/items/7'],
    ['dot segments back out of the path', 'https://api.example.com/v1/items/../../admin'],
    ['an encoded slash', 'https://api.example.com/v1%2Fitems'],
    ['a query', 'https://api.example.com/v1?x=1'],
    ['a fragment', 'https://api.example.com/v1#x'],
    ['an opaque name', 'api://api.example.com'],
    ['not a URL', 'api.example.com'],
  ])('%s: %s does not name it', (_what, aud) => {
    expect(audienceNames(aud, up)).toBe(false);
  });

  it('an upstream path with dot segments is judged as resolved, not as written', () => {
    expect(audienceNames('https://api.example.com/v1/items', new URL('https://api.example.com/v1/items/../../admin'))).toBe(false);
  });
});
