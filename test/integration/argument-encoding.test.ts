import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { Upstream } from '../helpers/upstream.js';

/**
 * An argument that cannot be encoded where the tool file puts it (a header value past U+00FF or
 * with a control character, a lone surrogate in the URL) is the model's mistake: 422 before any
 * request, never a 500, and never a "network failure" that is retried and opens the breaker for
 * every other caller.
 */
describe('arguments that cannot be encoded into the request', () => {
  let up: Upstream;
  let gw: TestGateway;
  const hits: string[] = [];

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((req, res) => {
      hits.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"user":${JSON.stringify(req.headers['x-user'] ?? null)}}`);
    });
    const inputSchema = { type: 'object', properties: { name: { type: 'string' } } };
    gw = await startGateway({
      tools: {
        'h.yaml': {
          name: 'enc.header', description: 'Puts an argument in a header.', sideEffect: 'read', inputSchema,
          breaker: { failureThreshold: 2 }, retry: { attempts: 3 },
          backends: [{ id: 'up', http: { url: `${up.url}/h`, headers: { 'x-user': 'u-{{name}}' } } }],
        },
        'u.yaml': {
          name: 'enc.url', description: 'Puts an argument in the URL.', sideEffect: 'read', inputSchema,
          backends: [{ id: 'up', http: { url: `${up.url}/items/{{name}}?q={{name}}` } }],
        },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await up?.close();
  });

  it.each(['漢字', 'a\u2024b', 'a\u2028b', 'a\u000bb', 'a\u007fb', 'a\u0000b', 'a\r\nX-Admin: 1'])('a header value %j is 422 INVALID_ARGUMENTS, nothing sent', async (name) => {
    const before = hits.length;
    const res = await gw.call('enc.header', { name });
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toMatchObject({ code: 'INVALID_ARGUMENTS', retryable: false });
    expect(hits.length).toBe(before);
  });

  it('such calls do not open the breaker: a good call right after still runs', async () => {
    for (let i = 0; i < 5; i++) expect((await gw.call('enc.header', { name: '漢字' })).statusCode).toBe(422);
    const ok = await gw.call('enc.header', { name: 'é' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().result.structuredContent).toEqual({ user: 'u-é' }); // Latin-1 text (obs-text) is still sent
  });

  it('a lone surrogate in a URL placeholder is 422, not 500', async () => {
    const res = await gw.call('enc.url', { name: 'a\ud800b' });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('INVALID_ARGUMENTS');
    expect(res.body).not.toMatch(/URIError|stack/);
  });
});
