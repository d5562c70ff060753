import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { errors, type ClientMetadata, type Configuration, type JWK, type KoaContextWithOIDC } from 'oidc-provider';

/**
 * A real OpenID provider (`oidc-provider`, certified) on 127.0.0.1 for end-to-end tests: dynamic
 * client registration, PKCE (S256) required for every client, RFC 8707 resource indicators whose
 * access tokens are RS256 JWTs with `aud` = the resource, and `roles` / `tools` claims per user.
 * Login and consent are automated: the interaction page signs in the user named by `login_hint`
 * (else `defaultUser`) and grants what the client asked for, so a browser or a fetch that follows
 * redirects with cookies completes the flow with no form.
 */

export interface IssuerUser {
  roles?: string[];
  tools?: string[];
  name?: string;
}

export interface TestIssuerOptions {
  /** Resource indicators this issuer mints tokens for (toolgate's resource URL first: the default). */
  resources: string[];
  /** Users by subject. Default: `alice` (every tool, approver) and `bob` (weather.* only, agent). */
  users?: Record<string, IssuerUser>;
  /** Scopes of the resource server (granted when asked for), besides openid / offline_access. */
  scopes?: string[];
  /** Pre-registered clients (e.g. the console: public, `token_endpoint_auth_method: 'none'`). */
  clients?: ClientMetadata[];
  accessTokenTTL?: number;
}

export interface LoginEvent {
  user: string;
  clientId: string;
}

export interface TestIssuer {
  /** `http://127.0.0.1:<port>`, the `iss` of its tokens; discovery at `/.well-known/openid-configuration`. */
  issuer: string;
  provider: Provider;
  /** Who signs in when the authorization request carries no `login_hint`. */
  defaultUser: string;
  /** Every automated sign-in, in order. */
  logins: LoginEvent[];
  /** Paths the provider was asked for (method + path, no query), in order. */
  requests: string[];
  /**
   * Follows an authorization URL through login and consent like a browser (cookies, 303s) and
   * returns the final redirect to the client's redirect URI (`?code=…&state=…&iss=…`).
   */
  follow(authorizationUrl: string | URL, redirectUri: string): Promise<URL>;
  /** A full authorization-code + PKCE flow with a freshly registered public client: the access token. */
  tokenFor(user: string, o?: { resource?: string; scope?: string }): Promise<string>;
  close(): Promise<void>;
}

export const DEFAULT_USERS: Record<string, IssuerUser> = {
  alice: { name: 'Alice Admin', roles: ['agent', 'approver'], tools: ['*'] },
  bob: { name: 'Bob Limited', roles: ['agent'], tools: ['weather.*'] },
};

function signingKey(): JWK {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...(privateKey.export({ format: 'jwk' }) as JWK), kid: `test-${randomBytes(4).toString('hex')}`, alg: 'RS256', use: 'sig' };
}

export const pkcePair = (): { verifier: string; challenge: string } => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

export async function startIssuer(opts: TestIssuerOptions): Promise<TestIssuer> {
  const users = opts.users ?? DEFAULT_USERS;
  const scopes = opts.scopes ?? [];
  const first = opts.resources[0];
  if (!first) throw new Error('startIssuer: at least one resource');
  const defaultResourceUrl: string = first;
  const requests: string[] = [];
  const logins: LoginEvent[] = [];
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server = createServer((req, res) => {
    requests.push(`${req.method ?? ''} ${(req.url ?? '').split('?')[0] ?? ''}`);
    if (handler) handler(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const config: Configuration = {
    clients: opts.clients ?? [],
    jwks: { keys: [signingKey()] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    claims: { openid: ['sub'], profile: ['name'] },
    scopes: ['openid', 'offline_access', 'profile', ...scopes],
    findAccount: (_ctx, sub) => {
      const u = users[sub];
      if (!u) return undefined;
      return { accountId: sub, claims: () => ({ sub, ...(u.name ? { name: u.name } : {}) }) };
    },
    pkce: { required: () => true },
    ttl: { AccessToken: opts.accessTokenTTL ?? 600, AuthorizationCode: 60, Grant: 3600, IdToken: 600, Interaction: 600, Session: 3600, RefreshToken: 3600 },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => defaultResourceUrl,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (!opts.resources.includes(indicator)) throw new errors.InvalidTarget();
          return {
            scope: scopes.join(' '),
            audience: indicator,
            accessTokenFormat: 'jwt',
            accessTokenTTL: opts.accessTokenTTL ?? 600,
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    extraTokenClaims: (_ctx, token) => {
      const u = 'accountId' in token && typeof token.accountId === 'string' ? users[token.accountId] : undefined;
      if (!u) return undefined;
      return { ...(u.roles ? { roles: u.roles } : {}), ...(u.tools ? { tools: u.tools } : {}) };
    },
    // A public client may call the token endpoint from the origin of its own redirect URIs (the console).
    clientBasedCORS: (_ctx, origin, client) => (client.redirectUris ?? []).some((u) => URL.parse(u)?.origin === origin),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    renderError: (ctx: KoaContextWithOIDC, out) => {
      ctx.type = 'json';
      ctx.body = out;
    },
  };
  const provider = new Provider(issuer, config);
  const callback = provider.callback();

  /** Automated login then consent: signs in the hinted (or default) user and grants what was asked. */
  async function interact(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    const clientId = String(details.params['client_id'] ?? '');
    if (details.prompt.name === 'login') {
      const hint = details.params['login_hint'];
      const user = typeof hint === 'string' && hint ? hint : self.defaultUser;
      if (!users[user]) {
        // The user "cancels": the client gets error=access_denied (the description names the user as given).
        await provider.interactionFinished(req, res, { error: 'access_denied', error_description: `no such user: ${user}` }, { mergeWithLastSubmission: false });
        return;
      }
      logins.push({ user, clientId });
      await provider.interactionFinished(req, res, { login: { accountId: user } }, { mergeWithLastSubmission: false });
      return;
    }
    const accountId = details.session?.accountId;
    if (!accountId) throw new Error('consent without a session');
    const grant = details.grantId ? await provider.Grant.find(details.grantId) : new provider.Grant({ accountId, clientId });
    if (!grant) throw new Error('grant vanished');
    const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, s] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, s.join(' '));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  handler = (req, res) => {
    if ((req.url ?? '').startsWith('/interaction/')) {
      interact(req, res).catch((e: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`interaction failed: ${e instanceof Error ? e.message : String(e)}`);
      });
      return;
    }
    void callback(req, res);
  };

  async function follow(authorizationUrl: string | URL, redirectUri: string): Promise<URL> {
    const jar = new Map<string, string>();
    let next = new URL(authorizationUrl);
    for (let hop = 0; hop < 12; hop++) {
      if (next.href.startsWith(redirectUri)) return next;
      if (next.origin !== issuer) throw new Error(`follow: left the issuer for ${next.href}`);
      const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
      const res = await fetch(next, { redirect: 'manual', headers: cookie ? { cookie } : {} });
      for (const sc of res.headers.getSetCookie()) {
        const pair = sc.split(';', 1)[0] ?? '';
        const eq = pair.indexOf('=');
        if (eq > 0) jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
      }
      const location = res.headers.get('location');
      if (res.status < 300 || res.status >= 400 || !location) throw new Error(`follow: ${res.status} at ${next.pathname}: ${(await res.text()).slice(0, 400)}`);
      next = new URL(location, next);
    }
    throw new Error('follow: no redirect to the client within 12 hops');
  }

  async function tokenFor(user: string, o: { resource?: string; scope?: string } = {}): Promise<string> {
    const redirectUri = 'http://127.0.0.1:1/callback';
    const reg = await fetch(`${issuer}/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [redirectUri], application_type: 'native', token_endpoint_auth_method: 'none', grant_types: ['authorization_code'], response_types: ['code'] }),
    });
    if (reg.status !== 201) throw new Error(`tokenFor: registration ${reg.status}: ${await reg.text()}`);
    const { client_id: clientId } = (await reg.json()) as { client_id: string };
    const resource = o.resource ?? defaultResourceUrl;
    const { verifier, challenge } = pkcePair();
    const auth = new URL(`${issuer}/auth`);
    const state = randomBytes(8).toString('hex');
    for (const [k, v] of Object.entries({ client_id: clientId, redirect_uri: redirectUri, response_type: 'code', scope: o.scope ?? 'openid', resource, code_challenge: challenge, code_challenge_method: 'S256', state, login_hint: user }))
      auth.searchParams.set(k, v);
    const back = await follow(auth, redirectUri);
    const code = back.searchParams.get('code');
    if (!code || back.searchParams.get('state') !== state) throw new Error(`tokenFor: bad callback ${back.href}`);
    const tok = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: clientId, code_verifier: verifier, resource }),
    });
    const body = (await tok.json()) as { access_token?: string };
    if (tok.status !== 200 || !body.access_token) throw new Error(`tokenFor: token ${tok.status}: ${JSON.stringify(body)}`);
    return body.access_token;
  }

  const self: TestIssuer = {
    issuer,
    provider,
    defaultUser: Object.keys(users)[0] ?? 'alice',
    logins,
    requests,
    follow,
    tokenFor,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return self;
}
