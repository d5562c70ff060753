import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

/** What the JWKS endpoint does now (switched by tests). */
export type JwksMode = 'ok' | 'hang' | 'garbage' | 'down' | 'huge';

interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface MintOptions {
  /** Default: the current key's kid; a string sends that kid instead. */
  kid?: string;
  alg?: string;
  typ?: string;
  /** Seconds from now (default 300); a negative number mints an expired token. */
  expiresIn?: number;
  /** Leave these registered claims out. */
  omit?: readonly ('iss' | 'aud' | 'exp' | 'iat' | 'sub')[];
  /** More protected-header parameters (jku, x5u, jwk, crit, b64...), signed with the issuer's key. */
  header?: Record<string, unknown>;
}

export interface IssuerOptions {
  /** Default audience of minted tokens. */
  audience?: string;
  alg?: 'RS256' | 'ES256';
  /** The issuer value the discovery document claims (default: its own URL). */
  claimedIssuer?: string;
}

export interface IntrospectionAnswer {
  active: boolean;
  [claim: string]: unknown;
}

/**
 * A real OpenID issuer on 127.0.0.1: discovery, JWKS and RFC 7662 introspection, with keys made
 * by jose. Switches make the JWKS hang, serve garbage or go down; counters say how often each
 * endpoint was fetched.
 */
export class TestIssuer {
  url = '';
  audience: string;
  jwksMode: JwksMode = 'ok';
  discoveryDown = false;
  readonly fetches = { discovery: 0, jwks: 0, introspection: 0 };
  /** Opaque tokens the introspection endpoint knows, and what it answers for each. */
  readonly opaque = new Map<string, IntrospectionAnswer>();
  /** The Authorization headers the introspection endpoint was sent. */
  readonly introspectionAuth: string[] = [];
  private keys: SigningKey[] = [];
  private readonly server: Server;
  private readonly alg: 'RS256' | 'ES256';
  private readonly hung: ServerResponse[] = [];

  private constructor(private readonly opts: IssuerOptions) {
    this.alg = opts.alg ?? 'RS256';
    this.audience = opts.audience ?? 'https://toolgate.test';
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.handle(req, res, Buffer.concat(chunks).toString()));
    });
  }

  static async start(opts: IssuerOptions = {}): Promise<TestIssuer> {
    const issuer = new TestIssuer(opts);
    await issuer.rotate();
    await new Promise<void>((resolve) => issuer.server.listen(0, '127.0.0.1', resolve));
    issuer.url = `http://127.0.0.1:${(issuer.server.address() as AddressInfo).port}`;
    return issuer;
  }

  get jwksUri(): string {
    return `${this.url}/jwks`;
  }

  /** The public JWK of the current signing key (an HS256 attack signs with it). */
  get publicJwk(): JWK {
    return (this.keys[0] as SigningKey).publicJwk;
  }

  /** A new signing key: it signs from now on and is published; `keepOld` keeps the old one published too. */
  async rotate(keepOld = false): Promise<string> {
    const { privateKey, publicKey } = await generateKeyPair(this.alg, { extractable: true });
    const kid = randomUUID();
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: this.alg, use: 'sig' };
    this.keys = [{ kid, alg: this.alg, privateKey, publicJwk }, ...(keepOld ? this.keys : [])];
    return kid;
  }

  /** A signed access token: iss, aud, sub, iat and exp filled in unless given or omitted. */
  async mint(claims: JWTPayload & Record<string, unknown> = {}, opts: MintOptions = {}): Promise<string> {
    const key = this.keys[0] as SigningKey;
    const now = Math.floor(Date.now() / 1000);
    const omit = new Set(opts.omit ?? []);
    const payload: Record<string, unknown> = {
      ...(omit.has('iss') ? {} : { iss: this.url }),
      ...(omit.has('aud') ? {} : { aud: this.audience }),
      ...(omit.has('sub') ? {} : { sub: 'user-1' }),
      ...(omit.has('iat') ? {} : { iat: now }),
      ...(omit.has('exp') ? {} : { exp: now + (opts.expiresIn ?? 300) }),
      ...claims,
    };
    return new SignJWT(payload)
      .setProtectedHeader({ alg: opts.alg ?? key.alg, kid: opts.kid ?? key.kid, ...(opts.typ === undefined ? { typ: 'at+jwt' } : opts.typ === '' ? {} : { typ: opts.typ }), ...opts.header })
      .sign(key.privateKey);
  }

  /**
   * A token signed with the current key over exactly the header and payload given (as JSON text, so
   * duplicate keys and odd values survive), past jose's own checks at signing (`crit`, types).
   */
  async signRaw(headerJson: string, payloadJson: string): Promise<string> {
    const key = this.keys[0] as SigningKey;
    const input = `${Buffer.from(headerJson).toString('base64url')}.${Buffer.from(payloadJson).toString('base64url')}`;
    const params = key.alg === 'RS256' ? { name: 'RSASSA-PKCS1-v1_5' } : { name: 'ECDSA', hash: 'SHA-256' };
    const sig = await crypto.subtle.sign(params, key.privateKey, new TextEncoder().encode(input));
    return `${input}.${Buffer.from(sig).toString('base64url')}`;
  }

  /** The current key's kid. */
  get kid(): string {
    return (this.keys[0] as SigningKey).kid;
  }

  /** Ends the requests a hanging JWKS holds, then the server. */
  async close(): Promise<void> {
    for (const r of this.hung.splice(0)) r.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private json(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }

  private handle(req: IncomingMessage, res: ServerResponse, body: string): void {
    const path = (req.url ?? '').split('?')[0];
    if (path === '/.well-known/openid-configuration') {
      this.fetches.discovery++;
      if (this.discoveryDown) return this.json(res, 503, { error: 'down' });
      return this.json(res, 200, {
        issuer: this.opts.claimedIssuer ?? this.url,
        jwks_uri: this.jwksUri,
        introspection_endpoint: `${this.url}/introspect`,
        token_endpoint: `${this.url}/token`,
        id_token_signing_alg_values_supported: [this.alg],
        scopes_supported: ['openid', 'tools:*'],
      });
    }
    if (path === '/jwks') {
      this.fetches.jwks++;
      switch (this.jwksMode) {
        case 'hang':
          this.hung.push(res);
          return;
        case 'garbage':
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"keys": [ this is not json');
          return;
        case 'down':
          return this.json(res, 503, { error: 'unavailable' });
        case 'huge':
          res.writeHead(200, { 'content-type': 'application/json' }).end(`{"keys":[],"pad":"${'x'.repeat(2 * 1024 * 1024)}"}`);
          return;
        default:
          return this.json(res, 200, { keys: this.keys.map((k) => k.publicJwk) });
      }
    }
    if (path === '/introspect' && req.method === 'POST') {
      this.fetches.introspection++;
      this.introspectionAuth.push(req.headers.authorization ?? '');
      const token = new URLSearchParams(body).get('token') ?? '';
      return this.json(res, 200, this.opaque.get(token) ?? { active: false });
    }
    this.json(res, 404, { error: 'not_found' });
  }
}
