import { decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import type { OidcIssuerConfig } from '../../config/schema.js';
import type { Caller } from '../caller.js';
import { callerFromClaims } from './claims.js';
import { Discovery } from './discovery.js';
import { fromJose, quote, tokenError } from './errors.js';
import { introspect } from './introspection.js';
import { JwksCache } from './jwks.js';
import { defaultAudiences } from '../resource.js';

/** Tunables shared by every issuer (the config's values; tests shorten them). */
export interface IssuerRuntime {
  readonly now?: () => number;
  /** A JWKS older than this is refetched in the background (default 10 min). */
  readonly jwksMaxAgeMs?: number;
}

const TYPES = new Set(['jwt', 'at+jwt', 'application/at+jwt', 'application/jwt']);

/**
 * Introspection requests in flight per issuer at most. Anyone can send an opaque value, and each
 * new one would cost a request to the issuer (made with the gateway's client credentials, which an
 * issuer may throttle or lock): past this, a new token waits for none and is refused as
 * issuer_unavailable (no invalid_token: the client may retry it).
 */
export const MAX_INTROSPECTIONS_IN_FLIGHT = 16;

/**
 * The audiences a token must name one of: the issuer's `audience`, else `server.publicUrl` as MCP
 * clients send it for RFC 8707 `resource` (mcp-remote and the SDKs add a trailing slash to a bare
 * origin, or ask for `<publicUrl>/mcp`): see defaultAudiences.
 */
export function audiencesOf(cfg: OidcIssuerConfig, publicUrl: string | undefined): string[] {
  if (cfg.audience !== undefined) return typeof cfg.audience === 'string' ? [cfg.audience] : [...cfg.audience];
  return publicUrl === undefined ? [] : defaultAudiences(publicUrl); // oidc-surface: the resource as clients ask for it
}

/** One trusted issuer: verifies its JWT access tokens (and, configured, introspects its opaque ones). */
export class TrustedIssuer {
  readonly audiences: string[];
  readonly discovery: Discovery;
  readonly jwks: JwksCache;
  private readonly now: () => number;
  private introspecting = 0;

  constructor(
    readonly config: OidcIssuerConfig,
    publicUrl: string | undefined,
    rt: IssuerRuntime = {},
  ) {
    this.now = rt.now ?? Date.now;
    this.audiences = audiencesOf(config, publicUrl);
    if (this.audiences.length === 0) throw new Error(`auth.oidc issuer ${config.issuer}: no audience (set audience, or server.publicUrl)`);
    const cooldownMs = config.jwksRefreshCooldownSeconds * 1000;
    this.discovery = new Discovery(config.issuer, { timeoutMs: config.fetchTimeoutMs, cooldownMs, now: this.now });
    const jwksUri = config.jwksUri;
    this.jwks = new JwksCache(async () => jwksUri ?? this.jwksFromDiscovery(), {
      timeoutMs: config.fetchTimeoutMs,
      cooldownMs,
      maxAgeMs: rt.jwksMaxAgeMs ?? 600_000,
      now: this.now,
    });
  }

  private async jwksFromDiscovery(): Promise<string> {
    const doc = await this.discovery.get();
    if (!doc.jwks_uri) throw new Error(`the discovery document of ${this.config.issuer} names no jwks_uri`);
    return doc.jwks_uri;
  }

  get introspects(): boolean {
    return this.config.introspection !== undefined;
  }

  /** A JWT access token of this issuer → its caller, or a typed 401. */
  async verifyJwt(token: string): Promise<Caller> {
    let alg: unknown;
    let typ: unknown;
    try {
      ({ alg, typ } = decodeProtectedHeader(token));
    } catch {
      throw tokenError('malformed', 'the token\'s header is not a JWS header');
    }
    if (typeof alg !== 'string' || !this.config.algorithms.includes(alg)) {
      throw tokenError('algorithm_not_allowed', `the token's algorithm ${quote(alg)} is not one this issuer may use (${this.config.algorithms.join(', ')})`);
    }
    if (typ !== undefined && (typeof typ !== 'string' || !TYPES.has(typ.toLowerCase()))) {
      throw tokenError('wrong_type', `the token's typ ${quote(typ)} is not an access token type (JWT, at+jwt)`);
    }
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, (h, t) => this.jwks.key(h, t), {
        issuer: this.config.issuer,
        audience: this.audiences,
        algorithms: this.config.algorithms,
        clockTolerance: this.config.clockSkewSeconds,
        requiredClaims: ['exp'],
        currentDate: new Date(this.now()),
      }));
    } catch (e) {
      throw fromJose(e);
    }
    return callerFromClaims(payload, this.config);
  }

  /** An opaque token, asked of the introspection endpoint (RFC 7662). */
  async introspect(token: string): Promise<Caller> {
    const intro = this.config.introspection;
    if (!intro) throw tokenError('malformed', 'the token is not a JWT and this issuer has no introspection configured');
    let endpoint = intro.endpoint;
    if (!endpoint) {
      try {
        endpoint = (await this.discovery.get()).introspection_endpoint;
      } catch (e) {
        throw tokenError('issuer_unavailable', `the issuer's discovery document is unavailable: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (!endpoint) throw tokenError('issuer_unavailable', 'the issuer\'s discovery document names no introspection_endpoint');
    }
    if (this.introspecting >= MAX_INTROSPECTIONS_IN_FLIGHT) {
      throw tokenError('issuer_unavailable', `${MAX_INTROSPECTIONS_IN_FLIGHT} tokens are being introspected already; try again shortly`);
    }
    this.introspecting++;
    try {
      const claims = await introspect(
        token,
        { endpoint, clientId: intro.clientId, clientSecret: intro.clientSecret, issuer: this.config.issuer, audiences: this.audiences, clockSkewSeconds: this.config.clockSkewSeconds, timeoutMs: this.config.fetchTimeoutMs },
        Math.floor(this.now() / 1000),
      );
      return callerFromClaims(claims, this.config);
    } finally {
      this.introspecting--;
    }
  }
}
