import type { Config } from '../../config/schema.js';

export interface OidcProblem {
  readonly path: string;
  readonly message: string;
}

const LOOPBACK = /^(localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\])$/;

/** Why a URL cannot name an issuer endpoint: not a URL, or plain http to anything but loopback (keys could be swapped on the way). */
function urlProblem(value: string, what: string): string | undefined {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return `${what} '${value}' is not a URL`;
  }
  if (u.search || u.hash) return `${what} '${value}' must not have a query or fragment`;
  if (u.protocol === 'http:' && !LOOPBACK.test(u.hostname)) return `${what} '${value}' must use https (plain http only to a loopback address)`;
  return undefined;
}

/**
 * The auth.oidc mistakes the schema cannot see. The gateway refuses to start with any of them, and
 * `toolgate check` lists them: an issuer without an audience would accept tokens minted for any
 * other service of the same identity provider.
 */
export function oidcProblems(config: Pick<Config, 'auth' | 'server'>): OidcProblem[] {
  const problems: OidcProblem[] = [];
  const seen = new Set<string>();
  config.auth.oidc.forEach((i, n) => {
    const at = `/auth/oidc/${n}`;
    const issuerProblem = urlProblem(i.issuer, 'issuer');
    if (issuerProblem) problems.push({ path: `${at}/issuer`, message: issuerProblem });
    if (seen.has(i.issuer)) problems.push({ path: `${at}/issuer`, message: `issuer '${i.issuer}' is listed twice` });
    seen.add(i.issuer);
    if (i.audience === undefined && config.server.publicUrl === undefined) {
      problems.push({
        path: `${at}/audience`,
        message: `issuer '${i.issuer}' has no audience: set its audience (the aud its tokens carry for this gateway) or server.publicUrl (the default audience); without one, tokens minted for any other service would be accepted`,
      });
    }
    if (i.jwksUri !== undefined) {
      const p = urlProblem(i.jwksUri, 'jwksUri');
      if (p) problems.push({ path: `${at}/jwksUri`, message: p });
    }
    const endpoint = i.introspection?.endpoint;
    if (endpoint !== undefined) {
      const p = urlProblem(endpoint, 'introspection endpoint');
      if (p) problems.push({ path: `${at}/introspection/endpoint`, message: p });
    }
  });
  // An opaque token names no issuer: with two introspecting issuers, each would be sent the other's users' tokens.
  const introspecting = config.auth.oidc.flatMap((i, n) => (i.introspection ? [n] : []));
  for (const n of introspecting.slice(1)) {
    problems.push({
      path: `/auth/oidc/${n}/introspection`,
      message: `only one issuer may have introspection: an opaque token names no issuer, so it would be sent to '${config.auth.oidc[introspecting[0] as number]?.issuer}' and to '${config.auth.oidc[n]?.issuer}' in turn, and each would see the other's users' tokens`,
    });
  }
  return problems;
}
