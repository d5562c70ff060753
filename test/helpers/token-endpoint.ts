import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, jwtVerify, createLocalJWKSet, type JWTPayload, type CryptoKey } from 'jose';

/** What the endpoint does with the next requests. */
export type TokenMode = 'ok' | 'fail' | 'hang' | 'garbage' | 'redirect' | 'wrong-type' | 'huge' | 'header-injection' | 'no-expiry-number';

export interface TokenRequest {
  readonly form: Record<string, string>;
  readonly authorization: string | undefined;
}

const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';

/**
 * A real OAuth token endpoint on 127.0.0.1 (node:http, ES256 tokens signed with jose), also the
 * issuer of the callers' own tokens: client_credentials and token exchange (RFC 8693, with an
 * `act` claim naming the exchanging client), client authentication by Basic or in the form.
 * It counts requests and can fail, hang, answer garbage or redirect.
 */
export class TokenEndpoint {
  readonly requests: TokenRequest[] = [];
  /** Every access token it issued at its token endpoint, and every caller token it minted (to check none leaks). */
  readonly issued: string[] = [];
  readonly userTokens: string[] = [];
  mode: TokenMode = 'ok';
  expiresIn = 3600;
  /** Delay before answering (ms): lets concurrent calls pile up on one fetch. */
  delayMs = 0;
  url = '';
  issuer = '';
  private server: Server | undefined;
  private key!: CryptoKey;
  private jwks!: ReturnType<typeof createLocalJWKSet>;
  private publicJwks: unknown;

  constructor(readonly clients: Readonly<Record<string, string>>) {}

  get tokenUrl(): string {
    return `${this.url}/token`;
  }

  /** Its signing keys (GET), for a gateway that validates the callers' tokens. */
  get jwksUri(): string {
    return `${this.url}/jwks`;
  }

  async start(): Promise<this> {
    const pair = await generateKeyPair('ES256');
    this.key = pair.privateKey;
    const set = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] };
    this.jwks = createLocalJWKSet(set);
    this.publicJwks = set;
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    this.issuer = this.url;
    return this;
  }

  /** A caller's access token (what an IdP would have given the agent). */
  async userToken(sub: string, aud: string | string[], extra: JWTPayload = {}): Promise<string> {
    const token = await this.sign({ ...extra, sub, client_id: 'agent-app' }, aud, 3600);
    this.userTokens.push(token);
    return token;
  }

  /** Verifies a token this endpoint issued, for `audience`. */
  async verify(token: string, audience: string | string[]): Promise<JWTPayload> {
    const { payload } = await jwtVerify(token, this.jwks, { issuer: this.issuer, audience });
    return payload;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  private sign(claims: JWTPayload, aud: string | string[], lifetime: number): Promise<string> {
    return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(this.issuer).setAudience(aud).setIssuedAt().setExpirationTime(`${lifetime}s`).sign(this.key);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'GET' && req.url === '/jwks') return send(res, 200, this.publicJwks);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
    this.requests.push({ form, authorization: req.headers.authorization });
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
    switch (this.mode) {
      case 'hang':
        return; // never answers
      case 'fail':
        return send(res, 500, { error: 'server_error', error_description: `boom for ${form['client_secret'] ?? ''}` });
      case 'garbage':
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end('<html>not json');
      case 'redirect':
        res.writeHead(302, { location: `${this.url}/elsewhere` });
        return void res.end();
      case 'wrong-type':
        return send(res, 200, { access_token: 'abc', token_type: 'N_A', expires_in: 60 });
      case 'header-injection':
        return send(res, 200, { access_token: 'abc\r\nx-evil: 1', token_type: 'Bearer', expires_in: 60 });
      case 'no-expiry-number':
        return send(res, 200, { access_token: 'abc', token_type: 'Bearer', expires_in: -5 });
      case 'huge':
        return send(res, 200, { access_token: 'a'.repeat(200_000), token_type: 'Bearer' });
      case 'ok':
        break;
    }
    const client = this.authenticate(req, form);
    if (!client) return send(res, 401, { error: 'invalid_client' });
    const aud = form['resource'] ?? form['audience'] ?? 'default';
    if (form['grant_type'] === 'client_credentials') {
      return this.issue(res, { sub: client, client_id: client, ...(form['scope'] ? { scope: form['scope'] } : {}) }, aud);
    }
    if (form['grant_type'] === EXCHANGE) {
      let subject: JWTPayload;
      try {
        subject = (await jwtVerify(form['subject_token'] ?? '', this.jwks, { issuer: this.issuer })).payload;
      } catch {
        return send(res, 400, { error: 'invalid_grant' });
      }
      const claims = { sub: subject.sub, client_id: client, act: { sub: client } };
      return this.issue(res, claims, aud, { issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' });
    }
    return send(res, 400, { error: 'unsupported_grant_type' });
  }

  private async issue(res: ServerResponse, claims: JWTPayload, aud: string, extra: Record<string, string> = {}): Promise<void> {
    const token = await this.sign(claims, aud, this.expiresIn);
    this.issued.push(token);
    send(res, 200, { access_token: token, token_type: 'Bearer', expires_in: this.expiresIn, ...extra });
  }

  private authenticate(req: IncomingMessage, form: Record<string, string>): string | undefined {
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
    let id = form['client_id'];
    let secret = form['client_secret'];
    if (basic) {
      const [a = '', b = ''] = Buffer.from(basic[1] as string, 'base64').toString('utf8').split(':');
      id = decodeURIComponent(a.replace(/\+/g, ' '));
      secret = decodeURIComponent(b.replace(/\+/g, ' '));
    }
    return id !== undefined && this.clients[id] !== undefined && this.clients[id] === secret ? id : undefined;
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
