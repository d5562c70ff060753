import { request, type Dispatcher } from 'undici';
import { GatewayError } from '../../errors.js';
import type { TokenClient } from './spec.js';

/** What a token endpoint may send back before it is cut off (a token answer is a few KiB). */
const MAX_ANSWER_BYTES = 64 * 1024;
/** An access token we will put in a header: RFC 6750 b64token, bounded. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const MAX_TOKEN_CHARS = 16 * 1024;
/** An OAuth error code (RFC 6749 §5.2) is quoted only when it looks like one: never the description. */
const ERROR_CODE = /^[a-z0-9_:.-]{1,64}$/i;
/** When an answer names no lifetime, the token is trusted this long. */
const DEFAULT_LIFETIME_S = 60;

export interface IssuedToken {
  readonly accessToken: string;
  /** Epoch ms at which the endpoint says it expires. */
  readonly expiresAt: number;
  /** The answer's `issued_token_type` (RFC 8693), when given. */
  readonly issuedTokenType: string | undefined;
}

export interface TokenRequestOptions {
  /** Epoch ms by which the endpoint must have answered. */
  readonly deadline: number;
  readonly dispatcher: Dispatcher;
  readonly now?: () => number;
}

/**
 * POSTs one token request (application/x-www-form-urlencoded) and reads a Bearer token from the
 * answer. Redirects are not followed; the answer is bounded; every failure is a
 * TokenEndpointError whose text holds the status and the OAuth error code at most, never a token,
 * the secret or the endpoint's prose.
 */
export async function requestToken(client: TokenClient, form: Record<string, string>, opts: TokenRequestOptions): Promise<IssuedToken> {
  const now = opts.now ?? Date.now;
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  const body = new URLSearchParams(form);
  if (client.authMethod === 'client_secret_basic') {
    // RFC 6749 §2.3.1: id and secret are form-encoded before they are joined.
    const pair = `${formEncode(client.clientId)}:${formEncode(client.clientSecret)}`;
    headers['authorization'] = `Basic ${Buffer.from(pair).toString('base64')}`;
  } else {
    body.set('client_id', client.clientId);
    body.set('client_secret', client.clientSecret);
  }
  const ms = Math.max(1, Math.ceil(opts.deadline - now()));
  let answer: Dispatcher.ResponseData;
  try {
    answer = await request(client.tokenUrl, { method: 'POST', headers, body: body.toString(), dispatcher: opts.dispatcher, signal: AbortSignal.timeout(ms) });
  } catch (e) {
    const timedOut = e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError');
    throw new TokenEndpointError(timedOut ? `did not answer within ${ms} ms` : `could not be reached (${errorCode(e) ?? 'network error'})`, true);
  }
  let text: string;
  try {
    text = await readBounded(answer.body, Math.max(1, Math.ceil(opts.deadline - now())));
  } catch (e) {
    throw new TokenEndpointError(e instanceof AnswerTooLarge ? `sent more than ${MAX_ANSWER_BYTES} bytes` : 'broke off its answer', true);
  }
  const status = answer.statusCode;
  if (status >= 300 && status < 400) throw new TokenEndpointError(`answered a redirect (${status}), which is not followed`, false);
  const json = parse(text);
  if (status !== 200) {
    const code = json && typeof json['error'] === 'string' && ERROR_CODE.test(json['error']) ? ` (${json['error']})` : '';
    throw new TokenEndpointError(`answered ${status}${code}`, status >= 500 || status === 429);
  }
  if (!json) throw new TokenEndpointError('answered with something other than a JSON object', false);
  const token = json['access_token'];
  if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_CHARS || !B64TOKEN.test(token)) {
    throw new TokenEndpointError('answered without a usable access_token', false);
  }
  const type = json['token_type'];
  if (typeof type !== 'string' || type.toLowerCase() !== 'bearer') {
    throw new TokenEndpointError(`answered a token_type other than Bearer (${typeof type === 'string' && ERROR_CODE.test(type) ? type : 'none'})`, false);
  }
  // A number; some servers (Entra ID v1) send it as a string of digits.
  const raw = json['expires_in'];
  const expiresIn = typeof raw === 'string' && /^[0-9]{1,10}$/.test(raw) ? Number(raw) : raw;
  if (expiresIn !== undefined && (typeof expiresIn !== 'number' || !Number.isFinite(expiresIn) || expiresIn <= 0)) {
    throw new TokenEndpointError('answered an expires_in that is not a positive number', false);
  }
  const issued = json['issued_token_type'];
  return {
    accessToken: token,
    expiresAt: now() + (expiresIn ?? DEFAULT_LIFETIME_S) * 1000,
    issuedTokenType: typeof issued === 'string' ? issued : undefined,
  };
}

/** Why a token request failed (no token, secret or endpoint prose in it); `transient` when a retry may fare better. */
export class TokenEndpointError extends Error {
  override readonly name = 'TokenEndpointError';
  constructor(
    readonly how: string,
    readonly transient: boolean,
  ) {
    super(`the token endpoint ${how}`);
  }
}

/** The 502 of a failed token request: noEffect (the upstream never saw the call). */
export function failure(what: string, how: string, transient: boolean): GatewayError {
  return new GatewayError('UPSTREAM_ERROR', `the token endpoint for ${what} ${how}`, {
    modelMessage: 'The gateway could not get a credential for this tool from its token endpoint. Try again later or use another tool.',
    details: [{ message: `token endpoint: ${how}` }],
    upstream: { transient, noEffect: true },
  });
}

function formEncode(s: string): string {
  return encodeURIComponent(s).replace(/%20/g, '+');
}

function parse(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

class AnswerTooLarge extends Error {}

async function readBounded(body: Dispatcher.ResponseData['body'], ms: number): Promise<string> {
  const timer = setTimeout(() => body.destroy(new Error('timed out')), ms);
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of body) {
      const b = chunk as Buffer;
      total += b.length;
      if (total > MAX_ANSWER_BYTES) {
        body.destroy();
        throw new AnswerTooLarge();
      }
      chunks.push(b);
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } finally {
    clearTimeout(timer);
  }
}

function errorCode(e: unknown): string | undefined {
  for (let cur: unknown = e; cur instanceof Error; cur = (cur as Error & { cause?: unknown }).cause) {
    const code = (cur as Error & { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z_]+$/.test(code)) return code;
  }
  return undefined;
}
