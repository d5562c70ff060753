import { randomUUID } from 'node:crypto';
import {
  Client,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  type OAuthClientInformationContext,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import type { TestIssuer } from './oidc-provider.js';

const REDIRECT = 'http://127.0.0.1:7/callback';

/**
 * The v2 SDK's OAuth client provider, in memory, as a real MCP client implements it (DCR, PKCE,
 * state, issuer-keyed credentials). "The browser" is the test issuer's `follow`, which signs in
 * `user` (sent as `login_hint`) and consents automatically.
 */
export class AutoLoginProvider implements OAuthClientProvider {
  readonly redirectUrl = REDIRECT;
  readonly clientMetadata: OAuthClientMetadata = {
    client_name: 'toolgate e2e (v2 SDK)',
    redirect_uris: [REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    application_type: 'native',
    token_endpoint_auth_method: 'none',
  };
  registrations = new Map<string, StoredOAuthClientInformation>();
  stored: StoredOAuthTokens | undefined;
  lastState: string | undefined;
  authorizationUrl: URL | undefined;
  /** The issuer's answer (code, state, iss) after the automated login. */
  callback: URL | undefined;
  private verifier: string | undefined;
  private discovery: OAuthDiscoveryState | undefined;

  constructor(
    private readonly issuer: TestIssuer,
    readonly user: string,
  ) {}

  clientInformation(ctx?: OAuthClientInformationContext) {
    return ctx ? this.registrations.get(ctx.issuer) : undefined;
  }
  saveClientInformation(info: StoredOAuthClientInformation, ctx?: OAuthClientInformationContext) {
    if (ctx) this.registrations.set(ctx.issuer, info);
  }
  tokens() {
    return this.stored;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.stored = tokens;
  }
  state() {
    this.lastState = randomUUID();
    return this.lastState;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
  async redirectToAuthorization(url: URL) {
    this.authorizationUrl = new URL(url);
    const withHint = new URL(url);
    withHint.searchParams.set('login_hint', this.user);
    this.callback = await this.issuer.follow(withHint, REDIRECT);
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    if (!this.verifier) throw new Error('no code verifier');
    return this.verifier;
  }
}

/**
 * The whole MCP authorization flow as the spec has it: connect → 401 → metadata discovery → DCR →
 * authorization code + PKCE (automated login) → token → reconnect with the token.
 */
export async function connectWithOAuth(mcpUrl: string, issuer: TestIssuer, user: string): Promise<{ client: Client; provider: AutoLoginProvider; firstError: unknown }> {
  const provider = new AutoLoginProvider(issuer, user);
  const first = new Client({ name: 'toolgate-e2e', version: '1.0.0' });
  let firstError: unknown;
  try {
    await first.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }));
  } catch (e) {
    firstError = e;
  }
  await first.close().catch(() => undefined);
  if (!(firstError instanceof UnauthorizedError)) throw new Error(`expected the first connect to need authorization, got ${String(firstError)}`);
  const back = provider.callback;
  if (!back) throw new Error('the SDK never redirected to the authorization server');
  if (back.searchParams.get('state') !== provider.lastState) throw new Error('state mismatch');
  if (back.searchParams.get('error')) throw new Error(`authorization failed: ${back.searchParams.get('error')} ${back.searchParams.get('error_description') ?? ''}`);
  const finishing = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
  await finishing.finishAuth(back.searchParams);
  const client = new Client({ name: 'toolgate-e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }));
  return { client, provider, firstError };
}
