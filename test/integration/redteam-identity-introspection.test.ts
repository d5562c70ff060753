import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestIssuer } from '../helpers/issuer.js';
import { issuerEntry, listTools, reasonOf, startOidcGateway } from '../helpers/oidc-gateway.js';

interface Seen {
  body: string;
  authorization: string | undefined;
}

/** A plain server on 127.0.0.1 that answers every request with `answer` and keeps what it was sent. */
async function server(answer: (res: import('node:http').ServerResponse) => void): Promise<{ url: string; seen: Seen[]; srv: Server }> {
  const seen: Seen[] = [];
  const srv = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ body: Buffer.concat(chunks).toString(), authorization: req.headers.authorization });
      answer(res);
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, seen, srv };
}

const close = (s: Server) => new Promise<void>((resolve) => { s.closeAllConnections(); s.close(() => resolve()); });

/**
 * Red team, issue 23: an opaque token and the gateway's introspection credentials go to the
 * configured introspection endpoint and nowhere else.
 */
describe('red team: introspection sends the token to its endpoint only', () => {
  let idp: TestIssuer;
  let catcher: Awaited<ReturnType<typeof server>>;
  let redirector: Awaited<ReturnType<typeof server>>;

  beforeAll(async () => {
    idp = await TestIssuer.start();
    // Another origin that would vouch for anything it is sent.
    catcher = await server((res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ active: true, sub: 'mallory', exp: Math.floor(Date.now() / 1000) + 300 })));
    // A broken (or taken-over) introspection endpoint: 307 keeps the method and the body.
    redirector = await server((res) => res.writeHead(307, { location: `${catcher.url}/steal` }).end());
  });
  afterAll(async () => {
    await close(catcher.srv);
    await close(redirector.srv);
    await idp.close();
  });

  it('a redirect from the introspection endpoint is not followed: neither the token nor the client secret reaches its target', async () => {
    const gw = await startOidcGateway([issuerEntry(idp, { defaultTools: ['*'], introspection: { endpoint: `${redirector.url}/introspect`, clientId: 'toolgate', clientSecret: 'intro-secret-1' } })]);
    try {
      const res = await listTools(gw, 'opaque-user-token-77');
      expect(res.statusCode).toBe(401);
      expect(reasonOf(res)).toBe('issuer_unavailable');
      expect(res.json().error.message).toMatch(/redirect|307/);
      expect(redirector.seen).toHaveLength(1);
      expect(catcher.seen).toEqual([]);
    } finally {
      await gw.close();
    }
  });

  it('two issuers that introspect are refused at load: an opaque token names no issuer, so it would be sent to each', async () => {
    const other = await TestIssuer.start();
    try {
      await expect(
        startOidcGateway([
          issuerEntry(idp, { introspection: { clientId: 'a', clientSecret: 'b' } }),
          issuerEntry(other, { introspection: { clientId: 'c', clientSecret: 'd' } }),
        ]),
      ).rejects.toThrow(/introspection.*only one issuer|one issuer.*introspection/i);
      // One issuer that introspects beside one that does not is fine.
      const gw = await startOidcGateway([issuerEntry(idp, { introspection: { clientId: 'a', clientSecret: 'b' } }), issuerEntry(other)]);
      await gw.close();
    } finally {
      await other.close();
    }
  });
});

describe('red team: endpoints a discovery document names', () => {
  it('a jwks_uri over plain http to a host other than loopback is refused, not fetched', async () => {
    let disc: Awaited<ReturnType<typeof server>> | undefined;
    // 0.0.0.0 is not loopback by name (a connection to it reaches this host, so nothing leaves the machine).
    disc = await server((res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer: disc?.url, jwks_uri: 'http://0.0.0.0:9/jwks' })));
    const idp = await TestIssuer.start({ claimedIssuer: disc.url });
    const gw = await startOidcGateway([{ issuer: disc.url, audience: idp.audience, algorithms: ['RS256'], fetchTimeoutMs: 500 }]);
    try {
      const res = await listTools(gw, await idp.mint({ iss: disc.url }));
      expect(res.statusCode).toBe(401);
      expect(reasonOf(res)).toBe('issuer_unavailable');
      expect(res.json().error.message).toMatch(/jwks_uri must use https/);
    } finally {
      await gw.close();
      await idp.close();
      await close(disc.srv);
    }
  });
});

describe('red team: a flood of opaque tokens', () => {
  it('costs the issuer at most 16 introspection requests at a time, the rest 401 issuer_unavailable, none a 500', async () => {
    const idp = await TestIssuer.start();
    let held = 0;
    const hung: import('node:http').ServerResponse[] = [];
    const slow = createServer((_req, res) => {
      held++;
      hung.push(res); // a slow issuer: answers nothing before the gateway's timeout
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/introspect`;
    const gw = await startOidcGateway([issuerEntry(idp, { fetchTimeoutMs: 1000, introspection: { endpoint: url, clientId: 'a', clientSecret: 'b' } })]);
    try {
      const answers = await Promise.all(Array.from({ length: 64 }, (_, i) => listTools(gw, `random-opaque-${i}-${Math.random()}`)));
      expect(held).toBeLessThanOrEqual(16);
      expect(answers.every((r) => r.statusCode === 401 && reasonOf(r) === 'issuer_unavailable')).toBe(true);
    } finally {
      await gw.close();
      for (const r of hung) r.destroy();
      await close(slow);
      await idp.close();
    }
  });
});

describe('red team: what an introspection answer says the token is', () => {
  it('an active refresh token (or ID token) is not an access token: token_type or Keycloak\'s typ say so', async () => {
    const idp = await TestIssuer.start();
    const gw = await startOidcGateway([issuerEntry(idp, { defaultTools: ['*'], introspection: { clientId: 'a', clientSecret: 'b' } })]);
    const exp = Math.floor(Date.now() / 1000) + 300;
    try {
      idp.opaque.set('refresh-1', { active: true, sub: 'rita', exp, token_type: 'refresh_token' });
      idp.opaque.set('refresh-kc', { active: true, sub: 'rita', exp, typ: 'Refresh' });
      idp.opaque.set('id-kc', { active: true, sub: 'rita', exp, typ: 'ID' });
      idp.opaque.set('string-true', JSON.parse(`{"active":"true","sub":"rita","exp":${exp}}`)); // "true", a string
      // A DPoP-bound token used as a bearer: the gateway checks no proof, so it must not accept it.
      idp.opaque.set('dpop-1', { active: true, sub: 'rita', exp, token_type: 'DPoP' });
      for (const t of ['refresh-1', 'refresh-kc', 'id-kc', 'string-true', 'dpop-1']) {
        const res = await listTools(gw, t);
        expect(res.statusCode, t).toBe(401);
      }
      expect(reasonOf(await listTools(gw, 'refresh-1'))).toBe('wrong_type');
      // Access tokens as providers describe them pass.
      idp.opaque.set('at-1', { active: true, sub: 'rita', exp, token_type: 'Bearer' });
      idp.opaque.set('at-kc', { active: true, sub: 'rita', exp, typ: 'Bearer', token_type: 'access_token' });
      idp.opaque.set('at-plain', { active: true, sub: 'rita', exp });
      for (const t of ['at-1', 'at-kc', 'at-plain']) expect((await listTools(gw, t)).statusCode, t).toBe(200);
    } finally {
      await gw.close();
      await idp.close();
    }
  });
});
