import type { FileProblem } from '../util/source.js';
import type { Config } from './schema.js';

/** What the console page is told about its sign-in (no secret exists to tell: the client is public). */
export interface ConsoleOidcSettings {
  issuer: string;
  clientId: string;
  scopes: string[];
  /** RFC 8707 resource the page sends; absent: none. */
  resource?: string;
}

/** console.oidc must name a trusted issuer, else its tokens would be refused after a successful sign-in. */
export function consoleOidcProblems(config: Config, file: string): FileProblem[] {
  const c = config.console.oidc;
  if (!c || config.auth.oidc.some((i) => i.issuer === c.issuer)) return [];
  const known = config.auth.oidc.map((i) => i.issuer);
  return [
    {
      file,
      path: '/console/oidc/issuer',
      message: `'${c.issuer}' is not one of auth.oidc[].issuer (${known.length > 0 ? known.join(', ') : 'none configured'}): the gateway would refuse the tokens it issues`,
    },
  ];
}

export function consoleOidcSettings(config: Config): ConsoleOidcSettings | undefined {
  const c = config.console.oidc;
  if (!c) return undefined;
  const entry = config.auth.oidc.find((i) => i.issuer === c.issuer);
  const audience = Array.isArray(entry?.audience) ? entry.audience[0] : entry?.audience;
  const resource = c.resource === false ? undefined : (c.resource ?? audience ?? config.server.publicUrl);
  return { issuer: c.issuer, clientId: c.clientId, scopes: [...c.scopes], ...(resource ? { resource } : {}) };
}
