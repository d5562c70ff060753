import { fetchDiscovery } from '../auth/oidc/discovery.js';
import { fetchJson } from '../auth/oidc/fetch-json.js';
import { checkJwks } from '../auth/oidc/jwks.js';
import { audiencesOf } from '../auth/oidc/issuer.js';
import type { Config, OidcIssuerConfig } from '../config/schema.js';
import type { FileProblem } from '../util/source.js';
import type { IssuerConnect, IssuerDiscovery, IssuerSummary } from './types.js';

/** The algorithms a JWK can verify: its own `alg`, else those of its key type (and curve). */
function keyAlgorithms(k: { kty?: unknown; alg?: unknown; crv?: unknown }): string[] {
  if (typeof k.alg === 'string') return [k.alg];
  if (k.kty === 'RSA') return ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
  if (k.kty === 'EC') return k.crv === 'P-256' ? ['ES256'] : k.crv === 'P-384' ? ['ES384'] : k.crv === 'P-521' ? ['ES512'] : [];
  if (k.kty === 'OKP') return ['EdDSA', 'Ed25519'];
  return [];
}

export function summarizeIssuers(config: Config): IssuerSummary[] {
  return config.auth.oidc.map((i) => ({
    issuer: i.issuer,
    audience: audiencesOf(i, config.server.publicUrl),
    algorithms: [...i.algorithms],
    jwksUri: i.jwksUri ?? null,
    introspection: i.introspection !== undefined,
  }));
}

async function connectOne(i: OidcIssuerConfig, timeoutMs: number): Promise<IssuerConnect> {
  let jwksUri = i.jwksUri;
  let discovery: IssuerDiscovery | undefined;
  try {
    if (!jwksUri || i.introspection) {
      const doc = await fetchDiscovery(i.issuer, { timeoutMs });
      discovery = { issuerMatches: true, jwksUri: doc.jwks_uri ?? null, introspectionEndpoint: doc.introspection_endpoint ?? null };
      jwksUri ??= doc.jwks_uri;
      if (!jwksUri) return { ok: false, error: 'the discovery document names no jwks_uri' };
    }
    const set = checkJwks(await fetchJson(jwksUri, { timeoutMs, maxBytes: 512 * 1024 }).catch((e: unknown) => {
      throw new Error(`JWKS ${jwksUri}: ${e instanceof Error ? e.message : String(e)}`);
    }));
    const offered = [...new Set(set.keys.flatMap(keyAlgorithms))];
    const usable = set.keys.filter((k) => keyAlgorithms(k).some((a) => i.algorithms.includes(a))).length;
    if (usable === 0) {
      return { ok: false, error: `none of the ${set.keys.length} JWKS key(s) fits the configured algorithms ${i.algorithms.join(', ')} (the keys offer ${offered.join(', ') || 'nothing usable'})` };
    }
    return { ok: true, ...(discovery === undefined ? {} : { discovery }), jwksUri, keys: set.keys.length, usableKeys: usable, keyAlgorithms: offered };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

/** `--connect`: each issuer's discovery document (when it is needed) and JWKS, fetched once, in parallel. */
export async function connectIssuers(config: Config, file: string, timeoutMs: number): Promise<{ results: IssuerConnect[]; errors: FileProblem[] }> {
  const results = await Promise.all(config.auth.oidc.map((i) => connectOne(i, timeoutMs)));
  const errors: FileProblem[] = [];
  results.forEach((r, n) => {
    if (!r.ok) errors.push({ file, path: `/auth/oidc/${n}`, message: `issuer '${config.auth.oidc[n]?.issuer}' cannot be used: ${r.error}` });
  });
  return { results, errors };
}
