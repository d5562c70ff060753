import { afterEach, describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/app.js';
import { TestIssuer, type IssuerOptions } from '../helpers/issuer.js';
import { issuerEntry, listTools, reasonOf, startOidcGateway } from '../helpers/oidc-gateway.js';

/**
 * The issuer's keys as a gateway sees them over time: cached, refetched on a new kid at most once
 * per cooldown, served from cache while the endpoint fails, closed when no key was ever had.
 */
describe('OIDC JWKS cache', () => {
  const open: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
  });

  async function setup(extra: Record<string, unknown> = {}, opts: IssuerOptions = {}): Promise<{ idp: TestIssuer; gw: TestGateway }> {
    const idp = await TestIssuer.start(opts);
    open.push(idp);
    const gw = await startOidcGateway([issuerEntry(idp, { defaultTools: ['*'], ...extra })]);
    open.push(gw);
    return { idp, gw };
  }

  it('a flood of random kids costs the issuer no extra JWKS fetch within the cooldown', async () => {
    const { idp, gw } = await setup();
    expect((await listTools(gw, await idp.mint())).statusCode).toBe(200);
    expect(idp.fetches.jwks).toBe(1);
    const tokens = await Promise.all(Array.from({ length: 100 }, (_, i) => idp.mint({ n: i }, { kid: `random-${i}-${Math.random()}` })));
    const answers = await Promise.all(tokens.map((t) => listTools(gw, t)));
    expect(answers.every((a) => a.statusCode === 401 && reasonOf(a) === 'unknown_key_id')).toBe(true);
    expect(idp.fetches.jwks).toBe(1);
    expect(idp.fetches.discovery).toBe(1);
  });

  it('after the cooldown an unknown kid refetches once (key rotation), and a burst of it shares one fetch', async () => {
    const { idp, gw } = await setup({ jwksRefreshCooldownSeconds: 0.2 });
    expect((await listTools(gw, await idp.mint())).statusCode).toBe(200);
    await idp.rotate(true);
    await new Promise((r) => setTimeout(r, 250));
    const fresh = await Promise.all(Array.from({ length: 20 }, (_, i) => idp.mint({ n: i })));
    const answers = await Promise.all(fresh.map((t) => listTools(gw, t)));
    expect(answers.map((a) => a.statusCode)).toEqual(fresh.map(() => 200));
    expect(idp.fetches.jwks).toBe(2);
  });

  it('a JWKS endpoint that hangs: 401 issuer_unavailable after the fetch timeout, not a hung request or a 500', async () => {
    const { idp, gw } = await setup({ fetchTimeoutMs: 300 });
    idp.jwksMode = 'hang';
    const t0 = Date.now();
    const res = await listTools(gw, await idp.mint());
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(res.statusCode).toBe(401);
    expect(reasonOf(res)).toBe('issuer_unavailable');
    expect(res.json().error.message).toMatch(/no answer within 300 ms/);
  });

  it('garbage, a 2 MB document, or a 503 from the JWKS with no key ever had: closed (401), and the issuer is not hammered', async () => {
    for (const mode of ['garbage', 'huge', 'down'] as const) {
      const { idp, gw } = await setup();
      idp.jwksMode = mode;
      const token = await idp.mint();
      for (let i = 0; i < 10; i++) {
        const res = await listTools(gw, token);
        expect(res.statusCode).toBe(401);
        expect(reasonOf(res)).toBe('issuer_unavailable');
      }
      expect(idp.fetches.jwks).toBe(1);
    }
  });

  it('the failure is not cached: once the issuer is back (after the cooldown) the same token is accepted', async () => {
    const { idp, gw } = await setup({ jwksRefreshCooldownSeconds: 0.2 });
    idp.jwksMode = 'down';
    const token = await idp.mint();
    expect((await listTools(gw, token)).statusCode).toBe(401);
    idp.jwksMode = 'ok';
    await new Promise((r) => setTimeout(r, 250));
    expect((await listTools(gw, token)).statusCode).toBe(200);
  });

  it('JWKS down, or serving garbage, after a success: new tokens are still verified from the cached keys', async () => {
    const { idp, gw } = await setup({ jwksRefreshCooldownSeconds: 0.05 });
    expect((await listTools(gw, await idp.mint({ n: 0 }))).statusCode).toBe(200);
    for (const mode of ['down', 'garbage', 'hang'] as const) {
      idp.jwksMode = mode;
      await new Promise((r) => setTimeout(r, 60));
      // An unknown kid makes the gateway try the endpoint (and fail) ...
      expect(reasonOf(await listTools(gw, await idp.mint({}, { kid: `gone-${mode}` })))).toBe('unknown_key_id');
      // ... and the keys it had still verify tokens it has not seen.
      expect((await listTools(gw, await idp.mint({ mode }))).statusCode).toBe(200);
    }
    expect(idp.fetches.jwks).toBeGreaterThanOrEqual(3);
  });

  it('a discovery document naming another issuer is refused (401 issuer_unavailable, saying why)', async () => {
    const { idp, gw } = await setup({}, { claimedIssuer: 'https://impostor.example' });
    const res = await listTools(gw, await idp.mint());
    expect(res.statusCode).toBe(401);
    expect(reasonOf(res)).toBe('issuer_unavailable');
    expect(res.json().error.message).toMatch(/names the issuer "https:\/\/impostor.example"/);
    expect(idp.fetches.jwks).toBe(0);
  });

  it('with jwksUri configured, discovery is not fetched', async () => {
    const idp = await TestIssuer.start();
    open.push(idp);
    const gw = await startOidcGateway([issuerEntry(idp, { jwksUri: idp.jwksUri, defaultTools: ['*'] })]);
    open.push(gw);
    expect((await listTools(gw, await idp.mint())).statusCode).toBe(200);
    expect(idp.fetches.discovery).toBe(0);
  });
});
