import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { Upstream, json } from '../helpers/upstream.js';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { lineSink } from '../helpers/log-lines.js';
import { TokenEndpoint } from '../helpers/token-endpoint.js';
import { createLogger } from '../../src/logger.js';
import { attachToken } from '../../src/auth/token-vault.js';
import type { Caller } from '../../src/auth/caller.js';
import { isGatewayError } from '../../src/errors.js';
import type { CallResponse } from '../../src/pipeline/index.js';

/**
 * Credentials to upstreams against real parts: a token endpoint on 127.0.0.1 that signs ES256
 * tokens, and upstreams that verify the token they receive (audience, subject, act).
 */
const CC_SECRET = 'cc-secret-Zq81/+x y';
const TX_SECRET = 'tx-secret-Pw93';
const KEY = 'agent-key-0123456789';
const GATEWAY_AUD = 'https://toolgate.example.com';

describe('upstream credentials (HTTP backends)', () => {
  let idp: TokenEndpoint;
  let up: Upstream;
  let gw: TestGateway;
  const lines: string[] = [];
  const seenTokens: string[] = [];
  /** Tokens the upstream no longer takes (revoked before their expiry). */
  const revoked = new Set<string>();

  const cc = (extra: Record<string, unknown> = {}) => ({
    clientCredentials: { tokenUrl: idp.tokenUrl, clientId: 'gateway', clientSecret: '${env:CC_SECRET}', scope: 'read', audience: up.url, ...extra },
  });
  const tool = (name: string, credentials: unknown, path = '/whoami', extra: Record<string, unknown> = {}) => ({
    name,
    description: `credentials test ${name}`,
    sideEffect: 'read',
    timeoutMs: 1500,
    retry: { attempts: 1 },
    backends: [{ id: 'up', http: { url: `${up.url}${path}` }, credentials }],
    ...extra,
  });

  beforeAll(async () => {
    idp = await new TokenEndpoint({ gateway: CC_SECRET, exchanger: TX_SECRET }).start();
    up = await new Upstream().start();
    // The upstream accepts only tokens issued for it, and says whose they are.
    up.on(async (req, res) => {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (token) seenTokens.push(token);
      if (req.url === '/echo') return json(res, 200, { headers: req.headers });
      try {
        if (revoked.has(token ?? '')) throw new Error('revoked');
        const claims = await idp.verify(token ?? '', [up.url, `${up.url}/v1`]);
        json(res, 200, { sub: claims.sub, act: claims['act'] ?? null, scope: claims['scope'] ?? null });
      } catch {
        json(res, 401, { error: 'invalid_token', echo: req.headers.authorization ?? null });
      }
    });
    gw = await startGateway({
      env: { CC_SECRET, TX_SECRET },
      config: {
        auth: {
          keys: [{ id: 'agent-1', key: KEY, roles: ['agent'] }],
          // The same server issues the callers' tokens: the gateway validates them (oidc-verify's Authenticator).
          oidc: [{ issuer: idp.issuer, audience: GATEWAY_AUD, jwksUri: idp.jwksUri, algorithms: ['ES256'], defaultTools: ['*'] }],
        },
      },
      logger: createLogger('debug', new Set(), lineSink(lines)),
      tools: {
        'cc.yaml': tool('cc.whoami', cc()),
        'cc-par.yaml': tool('cc.parallel', cc()),
        'cc-short.yaml': tool('cc.short', cc()),
        'cc-post.yaml': tool('cc.post', cc({ authMethod: 'client_secret_post' })),
        'cc-fail.yaml': tool('cc.failing', cc()),
        'cc-revoke.yaml': tool('cc.revoke', cc()),
        'tx.yaml': tool('tx.whoami', { tokenExchange: { tokenUrl: idp.tokenUrl, clientId: 'exchanger', clientSecret: '${env:TX_SECRET}', audience: up.url, scope: 'read' } }),
        'pt.yaml': tool('pt.whoami', { passthrough: true }, '/v1/whoami'),
        'cc-echo.yaml': tool('cc.echo', cc(), '/echo'),
        'tx-echo.yaml': tool('tx.echo', { tokenExchange: { tokenUrl: idp.tokenUrl, clientId: 'exchanger', clientSecret: '${env:TX_SECRET}', audience: up.url } }, '/echo'),
        'pt-echo.yaml': tool('pt.echo', { passthrough: true }, '/echo'),
      },
    });
    expect(gw.app.gw.registry.problems).toEqual([]);
  });
  afterAll(async () => {
    await gw?.close();
    await up?.close();
    await idp?.close();
  });

  const user = async (sub: string, aud: string[]): Promise<Caller> => {
    const caller: Caller = {
      id: sub,
      roles: new Set(['agent']),
      toolPatterns: [/^/],
      identity: { issuer: idp.issuer, subject: sub, scopes: [], audience: aud, expiresAt: Math.floor(Date.now() / 1000) + 3600 },
    };
    attachToken(caller, await idp.userToken(sub, aud));
    return caller;
  };
  const callAs = (caller: Caller, toolName: string) => gw.app.gw.pipeline.call({ toolName, args: {}, caller, requestId: 'r1' }) as Promise<CallResponse>;
  const failureOf = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (e) {
      if (isGatewayError(e)) return e;
      throw e;
    }
    throw new Error('the call succeeded');
  };
  const answer = (out: CallResponse) => JSON.parse(String(out.result.content[0]?.["text"])) as { sub: string; act: { sub: string } | null; scope: string | null };
  const grants = (grant: string) => idp.requests.filter((r) => r.form['grant_type'] === grant);
  const CC = 'client_credentials';
  const TX = 'urn:ietf:params:oauth:grant-type:token-exchange';

  it('clientCredentials: the upstream gets a token for its audience; N calls cost one token request (Basic auth, resource and audience sent)', async () => {
    const before = idp.requests.length;
    for (let i = 0; i < 4; i++) {
      const res = await gw.call('cc.whoami', {}, { key: KEY });
      expect(res.statusCode, res.body).toBe(200);
      expect(JSON.parse(res.body).result.structuredContent).toMatchObject({ sub: 'gateway', scope: 'read' });
    }
    const mine = idp.requests.slice(before);
    expect(mine).toHaveLength(1);
    const r = mine[0]!;
    expect(r.form).toMatchObject({ grant_type: CC, scope: 'read', resource: up.url, audience: up.url });
    expect(r.form['client_secret']).toBeUndefined();
    // RFC 6749 §2.3.1: each part form-encoded, then Basic.
    expect(r.authorization).toBe(`Basic ${Buffer.from(`gateway:${encodeURIComponent(CC_SECRET).replace(/%20/g, '+')}`).toString('base64')}`);
  });

  it('clientCredentials with client_secret_post sends the secret in the form, not in Basic', async () => {
    const before = idp.requests.length;
    expect((await gw.call('cc.post', {}, { key: KEY })).statusCode).toBe(200);
    const r = idp.requests[before]!;
    expect(r.authorization).toBeUndefined();
    expect(r.form).toMatchObject({ client_id: 'gateway', client_secret: CC_SECRET });
  });

  it('clientCredentials: 12 calls at once share one token request', async () => {
    const before = idp.requests.length;
    idp.delayMs = 150;
    try {
      const all = await Promise.all(Array.from({ length: 12 }, () => gw.call('cc.parallel', {}, { key: KEY })));
      expect(all.map((r) => r.statusCode)).toEqual(Array(12).fill(200));
    } finally {
      idp.delayMs = 0;
    }
    expect(idp.requests.length - before).toBe(1);
  });

  it('clientCredentials: a token is renewed shortly before it expires, not at every call', async () => {
    idp.expiresIn = 2; // renewed 10 % early: after 1.8 s
    try {
      const before = grants(CC).length;
      expect((await gw.call('cc.short', {}, { key: KEY })).statusCode).toBe(200);
      expect((await gw.call('cc.short', {}, { key: KEY })).statusCode).toBe(200);
      expect(grants(CC).length - before).toBe(1);
      await new Promise((r) => setTimeout(r, 1900));
      expect((await gw.call('cc.short', {}, { key: KEY })).statusCode).toBe(200);
      expect(grants(CC).length - before).toBe(2);
    } finally {
      idp.expiresIn = 3600;
    }
  });

  it('clientCredentials: a cached token the upstream refuses (401) is dropped and the call sent once more with a new one', async () => {
    expect((await gw.call('cc.revoke', {}, { key: KEY })).statusCode).toBe(200);
    revoked.add(seenTokens.at(-1)!);
    const before = grants(CC).length;
    const upBefore = up.seen.length;
    const res = await gw.call('cc.revoke', {}, { key: KEY });
    expect(res.statusCode, res.body).toBe(200);
    expect(grants(CC).length - before).toBe(1);
    expect(up.seen.length - upBefore).toBe(2);
    expect((await gw.call('cc.revoke', {}, { key: KEY })).statusCode).toBe(200);
    expect(grants(CC).length - before).toBe(1); // the new one is cached
  });

  it('a token endpoint that fails, answers garbage, redirects or hangs: 502 UPSTREAM_ERROR, the upstream never called, nothing cached', async () => {
    const cases = [
      { mode: 'fail', says: /answered 500 \(server_error\)/ },
      { mode: 'garbage', says: /other than a JSON object/ },
      { mode: 'redirect', says: /redirect \(302\), which is not followed/ },
      { mode: 'wrong-type', says: /token_type other than Bearer/ },
      { mode: 'huge', says: /more than 65536 bytes/ },
      { mode: 'header-injection', says: /without a usable access_token/ },
      { mode: 'no-expiry-number', says: /expires_in that is not a positive number/ },
      { mode: 'hang', says: /did not answer within/ },
    ] as const;
    for (const c of cases) {
      idp.mode = c.mode;
      onTestFinished(() => {
        idp.mode = 'ok';
      });
      const upBefore = up.seen.length;
      const started = Date.now();
      const res = await gw.call('cc.failing', {}, { key: KEY });
      expect(res.statusCode, `${c.mode}: ${res.body}`).toBe(502);
      const body = JSON.parse(res.body);
      expect(body.error.code).toBe('UPSTREAM_ERROR');
      expect(body.error.message).toMatch(c.says);
      expect(res.body).not.toContain(CC_SECRET);
      expect(res.body).not.toContain('boom');
      expect(up.seen.length).toBe(upBefore);
      if (c.mode === 'hang') expect(Date.now() - started).toBeLessThan(1500); // its own 502 before the tool's 504
    }
    expect(idp.requests.some((r) => r.form['grant_type'] === undefined)).toBe(false);
    // Healthy again: the next call fetches (no failure was cached) and succeeds.
    idp.mode = 'ok';
    const before = idp.requests.length;
    const res = await gw.call('cc.failing', {}, { key: KEY });
    expect(res.statusCode, res.body).toBe(200);
    expect(idp.requests.length - before).toBe(1);
  });

  it('tokenExchange: each user gets a token for the upstream naming them (act: the gateway), cached per user, never shared', async () => {
    const before = grants(TX).length;
    const alice = await user('alice', [GATEWAY_AUD]);
    const bob = await user('bob', [GATEWAY_AUD]);
    const outs = await Promise.all([callAs(alice, 'tx.whoami'), callAs(bob, 'tx.whoami'), callAs(alice, 'tx.whoami'), callAs(bob, 'tx.whoami')]);
    expect(outs.map((o) => answer(o).sub)).toEqual(['alice', 'bob', 'alice', 'bob']);
    expect(answer(outs[0]!).act).toEqual({ sub: 'exchanger' });
    expect(answer(await callAs(alice, 'tx.whoami')).sub).toBe('alice');
    const mine = grants(TX).slice(before);
    expect(mine).toHaveLength(2); // one per user, under concurrency too
    const forms = mine.map((r) => r.form).sort((a, b) => (a['subject_token']! < b['subject_token']! ? -1 : 1));
    for (const f of forms) {
      expect(f).toMatchObject({
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        resource: up.url,
        audience: up.url,
        scope: 'read',
      });
    }
    expect(new Set(forms.map((f) => f['subject_token'])).size).toBe(2);
    // A new token of the same user is another subject token: exchanged anew, not served alice's cached one by name.
    const alice2 = await user('alice', [GATEWAY_AUD]);
    expect(answer(await callAs(alice2, 'tx.whoami')).sub).toBe('alice');
  });

  it('tokenExchange over REST with a real access token: validated by the gateway, exchanged, the upstream sees the user', async () => {
    const token = await idp.userToken('henry', GATEWAY_AUD);
    const before = grants(TX).length;
    for (let i = 0; i < 2; i++) {
      const res = await gw.app.inject({ method: 'POST', url: '/v1/tools/tx.whoami/call', headers: { authorization: `Bearer ${token}` }, payload: { arguments: {} } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().result.structuredContent).toMatchObject({ sub: 'henry', act: { sub: 'exchanger' } });
    }
    expect(grants(TX).length - before).toBe(1);
    expect(grants(TX).at(-1)!.form['subject_token']).toBe(token);
    // passthrough of a gateway-only token over REST: refused.
    const pt = await gw.app.inject({ method: 'POST', url: '/v1/tools/pt.whoami/call', headers: { authorization: `Bearer ${token}` }, payload: { arguments: {} } });
    expect(pt.statusCode, pt.body).toBe(403);
    expect(pt.body).not.toContain(token);
  });

  it('tokenExchange for an API-key caller: 403 FORBIDDEN (no user token to exchange), no token request, no 500', async () => {
    const before = idp.requests.length;
    const res = await gw.call('tx.whoami', {}, { key: KEY });
    expect(res.statusCode, res.body).toBe(403);
    expect(JSON.parse(res.body).error).toMatchObject({ code: 'FORBIDDEN', retryable: false });
    expect(JSON.parse(res.body).error.message).toMatch(/OAuth access token, not an API key/);
    expect(idp.requests.length).toBe(before);
  });

  it('passthrough: refused for a token minted for the gateway only, or an audience that merely resembles the upstream; forwarded when its audience names it', async () => {
    const upBefore = up.seen.length;
    const u = new URL(up.url);
    const hostile = [
      [GATEWAY_AUD],
      [`${up.url}0`], // another port that starts the same
      [`http://${u.hostname}.evil.example:${u.port}`],
      [`${up.url}/v10`], // not a path prefix of /v1/whoami
      [`${up.url}/v1?x=1`],
      ['api://whoami'],
    ];
    for (const aud of hostile) {
      const e = await failureOf(callAs(await user('carol', aud), 'pt.whoami'));
      expect(e.code, aud.join()).toBe('FORBIDDEN');
      expect(e.message).toMatch(/audience/);
    }
    expect(up.seen.length).toBe(upBefore);
    const keyRes = await gw.call('pt.whoami', {}, { key: KEY });
    expect(keyRes.statusCode).toBe(403);
    // Audience [gateway, upstream]: the caller's own token goes upstream (verified there for the upstream's audience).
    const dave = await user('dave', [GATEWAY_AUD, `${up.url}/v1`]);
    expect(answer(await callAs(dave, 'pt.whoami')).sub).toBe('dave');
  });

  it('a per-user token the upstream refuses neither leaks into the error nor disables the backend for everyone', async () => {
    // The upstream verifies for its own audience; a token exchanged for another one is refused (401) and echoed.
    const other = await startGateway({
      env: { TX_SECRET },
      tools: { 'tx.yaml': tool('tx.other', { tokenExchange: { tokenUrl: idp.tokenUrl, clientId: 'exchanger', clientSecret: '${env:TX_SECRET}', audience: 'https://elsewhere.example' } }) },
    });
    try {
      const erin = await user('erin', [GATEWAY_AUD]);
      const e = await failureOf(other.app.gw.pipeline.call({ toolName: 'tx.other', args: {}, caller: erin, requestId: 'r2' }));
      expect(e.code).toBe('UPSTREAM_ERROR');
      const text = JSON.stringify(e.toBody());
      const exchanged = seenTokens.at(-1)!;
      expect(text).toContain('upstream status 401');
      expect(text).not.toContain(exchanged);
      const e2 = await failureOf(other.app.gw.pipeline.call({ toolName: 'tx.other', args: {}, caller: await user('frank', [GATEWAY_AUD]), requestId: 'r3' }));
      expect(e2.code).toBe('UPSTREAM_ERROR'); // still tried for frank: not BACKEND_DISABLED
    } finally {
      await other.close();
    }
  });

  it('an upstream that echoes its request headers does not hand the bearer token to the model', async () => {
    const res = await gw.call('cc.echo', {}, { key: KEY });
    expect(res.statusCode, res.body).toBe(200);
    expect(JSON.parse(res.body).result.structuredContent.headers.authorization).toBe('Bearer [REDACTED]');
    for (const t of idp.issued) expect(res.body).not.toContain(t);
    const gina = await user('gina', [GATEWAY_AUD, up.url]);
    for (const name of ['tx.echo', 'pt.echo']) {
      const out = await callAs(gina, name);
      expect(JSON.stringify(out.result)).toContain('Bearer [REDACTED]');
      for (const t of [...idp.issued, ...seenTokens]) expect(JSON.stringify(out.result)).not.toContain(t);
    }
  });

  it('no token endpoint secret, issued token or subject token is in a log line or an audit record', async () => {
    const records = JSON.stringify(await gw.audit());
    const logs = lines.join('\n');
    expect(lines.length).toBeGreaterThan(0);
    expect(idp.userTokens.length).toBeGreaterThan(5);
    for (const secret of [CC_SECRET, TX_SECRET, encodeURIComponent(CC_SECRET), ...idp.issued, ...idp.userTokens, ...seenTokens]) {
      expect(logs).not.toContain(secret);
      expect(records).not.toContain(secret);
    }
  });
});
