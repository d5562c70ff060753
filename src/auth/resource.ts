import type { Config, OidcIssuerConfig } from '../config/schema.js';

/**
 * The gateway as an OAuth protected resource (RFC 9728). Its identifier is `server.publicUrl`,
 * never a name taken from the request (a spoofed Host would otherwise choose the audience clients
 * ask tokens for): without it, tokens still work (with an explicit audience) but no metadata is
 * published. Absent without `auth.oidc`: the gateway then takes API keys only.
 */
export interface ProtectedResource {
  /** `server.publicUrl` without a trailing slash: the resource of the root metadata document; undefined when unset (no metadata is published). */
  readonly resource: string | undefined;
  /** Where every 401 points clients (`resource_metadata`); undefined without publicUrl. */
  readonly metadataUrl: string | undefined;
  readonly authorizationServers: readonly string[];
  /** The issuers' `requiredScopes`, once each. */
  readonly scopesSupported: readonly string[];
  readonly issuers: readonly OidcIssuerConfig[];
}

/** The metadata paths: the root document and the one RFC 9728 §3.1 forms for `<publicUrl>/mcp`. */
export const METADATA_PATH = '/.well-known/oauth-protected-resource';

export function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

export function protectedResource(config: Pick<Config, 'server' | 'auth'>): ProtectedResource | undefined {
  const { oidc, mode } = config.auth;
  if (oidc.length === 0 || mode === 'none') return undefined;
  const publicUrl = config.server.publicUrl;
  const resource = publicUrl === undefined ? undefined : trimSlash(publicUrl);
  return {
    resource,
    metadataUrl: resource === undefined ? undefined : `${resource}${METADATA_PATH}`,
    authorizationServers: [...new Set(oidc.map((i) => i.issuer))],
    scopesSupported: [...new Set(oidc.flatMap((i) => i.requiredScopes))],
    issuers: oidc,
  };
}

/**
 * The audiences a token may name when its issuer sets no `audience`: the resource as clients
 * write it. The MCP SDKs send RFC 8707 `resource` as a parsed URL's href (a bare origin gains a
 * trailing slash), and a client that probes the path-based metadata asks for `<publicUrl>/mcp`.
 */
export function defaultAudiences(publicUrl: string): string[] {
  const base = trimSlash(publicUrl);
  return [...new Set([base, `${base}/`, `${base}/mcp`])];
}

/** The RFC 9728 document: the root one names the gateway, the `/mcp` one names `<publicUrl>/mcp` (§3.3: the resource must be the URL the document was formed from). */
export function metadataDocument(pr: ProtectedResource & { resource: string }, suffix: '' | '/mcp'): Record<string, unknown> {
  return {
    resource: `${pr.resource}${suffix}`,
    authorization_servers: pr.authorizationServers,
    bearer_methods_supported: ['header'],
    ...(pr.scopesSupported.length > 0 ? { scopes_supported: pr.scopesSupported } : {}),
    resource_name: 'toolgate',
  };
}

/** The issuer entry of a token caller's issuer. */
export function issuerOf(pr: ProtectedResource | undefined, issuer: string): OidcIssuerConfig | undefined {
  return pr?.issuers.find((i) => i.issuer === issuer);
}
