import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import type { TestGateway } from '../helpers/app.js';
import { TestIssuer } from '../helpers/issuer.js';
import { lineSink } from '../helpers/log-lines.js';
import { issuerEntry, startOidcGateway } from '../helpers/oidc-gateway.js';

/**
 * Red team, issue 23: a token sent where the gateway does not take one (the query string, as
 * EventSource clients that cannot set headers do) is refused, and must not be written to the log
 * either (on dd5365e the request line logged the URL with it).
 */
describe('red team: tokens in the query string stay out of the log', () => {
  let idp: TestIssuer;
  let gw: TestGateway;
  const lines: string[] = [];

  beforeAll(async () => {
    idp = await TestIssuer.start();
    gw = await startOidcGateway([issuerEntry(idp, { defaultTools: ['*'] })], { logger: createLogger('info', new Set(), lineSink(lines)) });
  });
  afterAll(async () => {
    await gw.close();
    await idp.close();
  });

  it('access_token, token, api_key and an authorization code in the URL are masked in the request line; other parameters are kept', async () => {
    const jwt = await idp.mint({ sub: 'quinn' });
    const urls = [
      `/v1/tools?access_token=${jwt}&limit=5`,
      `/sse?token=${jwt}`,
      `/v1/tools?API_KEY=${jwt.slice(0, 40)}`,
      `/console/?code=auth-code-1234567890&state=xyz`,
      `/v1/tools?x=1&Access-Token=${encodeURIComponent(jwt)}`,
    ];
    for (const url of urls) {
      const res = await gw.app.inject({ method: 'GET', url, headers: { accept: 'text/event-stream' } });
      if (!url.startsWith('/console')) expect(res.statusCode).toBe(401); // never accepted from the query string
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    const log = lines.join('\n');
    expect(log).toContain('"request"');
    expect(log).not.toContain(jwt.split('.')[2]);
    expect(log).not.toContain(jwt.slice(0, 40));
    expect(log).not.toContain('auth-code-1234567890');
    expect(log).toContain('limit=5');
    expect(log).toContain('state=xyz');
  });
});
