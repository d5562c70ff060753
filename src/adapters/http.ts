import { Agent, type Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError, type UpstreamFailure } from '../errors.js';
import { MIN_SECRET_LENGTH, secretMatcher } from '../audit/secrets.js';
import { render, renderJson } from '../util/template.js';
import { renderUrl } from '../util/url-template.js';
import type { Cancel, CancelListener } from '../util/cancel.js';
import { pending, type Settle } from '../util/settle.js';
import type { HttpTarget } from '../tools/types.js';
import { planSecrets, type RequestPlan } from '../tools/openapi/plan.js';
import { buildRequest, checkHeaderValue, type BuiltRequest } from './openapi-request.js';
import type { AdapterRequest, ToolAdapter, UpstreamPayload } from './types.js';
import { UpstreamTokens, type CredentialRequest, type Got, type UpstreamCredentials } from '../auth/upstream/index.js';

const TRIM_BYTES = 1024;
const NO_EFFECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);
const JSON_MEDIA_TYPE = /[/+]json\b/i;
const NO_SECRETS: ReadonlySet<string> = new Set();

/** What an upstream answered: status, the headers the adapter reads, and the body (capped). */
interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly bytes: Buffer;
}

/**
 * Calls HTTP backends through one pooled undici Agent, with undici's dispatch API and a handler
 * of our own: no response stream, no AbortSignal listener per call (the call's Cancel aborts the
 * request directly), the body collected under the backend's size cap.
 */
export class HttpAdapter implements ToolAdapter {
  private readonly dispatcher: Dispatcher;
  /** The last URL each target rendered, split for dispatch (a URL without placeholders is split once). */
  private readonly urls = new WeakMap<HttpTarget, { href: string; origin: string; path: string }>();

  private readonly tokens: UpstreamTokens;
  private readonly ownTokens: boolean;

  /** `tokens`: shared with the MCP pool (its owner closes it); else one of its own. */
  constructor(dispatcher?: Dispatcher, tokens?: UpstreamTokens) {
    this.tokens = tokens ?? new UpstreamTokens();
    this.ownTokens = tokens === undefined;
    // The tool's deadline governs; undici's own timeouts would cut long calls short.
    this.dispatcher = dispatcher ?? new Agent({ connections: 256, headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 10_000 });
  }

  async call(req: AdapterRequest): Promise<UpstreamPayload> {
    const t = req.backend.target as HttpTarget;
    const { origin, path, headers, body } = t.openapi ? this.fromPlan(t.openapi, req) : this.fromTemplates(t, req);
    if (req.cancel.aborted) throw req.cancel.reason as Error;

    const known = t.openapi ? this.withPlanSecrets(t.openapi, req.secrets) : req.secrets;
    const sent = t.credentials
      ? await this.sendWithToken(t.credentials, origin, path, t, headers, body, { ...req, secrets: known })
      : { answer: await this.send(origin, path, t, headers, body, req), secrets: known };
    const { secrets } = sent;
    // The credentials an operation sends never come back to the model, whatever the gateway's secret set holds.
    const answer = t.openapi ? secretsOf(t.openapi).reduce((a, secret) => (secret.length >= MIN_SECRET_LENGTH ? withoutToken(a, secret) : a), sent.answer) : sent.answer;
    const contentType = headerText(answer.headers['content-type']);
    if (answer.status >= 400) throw statusError(answer, secrets);
    if (JSON_MEDIA_TYPE.test(contentType)) {
      try {
        return { kind: 'json', data: answer.bytes.length === 0 ? null : JSON.parse(answer.bytes.toString('utf8')) };
      } catch {
        throw new GatewayError('UPSTREAM_ERROR', 'the upstream sent invalid JSON', {
          details: [{ message: 'invalid JSON body', status: answer.status, body: trim(answer.bytes, secrets) }],
          upstream: { transient: false, noEffect: false, status: answer.status },
        });
      }
    }
    return { kind: 'text', text: answer.bytes.toString('utf8'), contentType };
  }

  /** The request of a templated backend (url, headers and body of its tool file). */
  private fromTemplates(t: HttpTarget, req: AdapterRequest): BuiltRequest {
    const { origin, path } = this.split(t, renderUrl(t.url, req.args));
    const headers: Record<string, string> = { 'x-request-id': req.requestId };
    for (const [name, tpl] of t.headers) {
      const value = render(tpl, req.args);
      // Refused here, as the model's mistake: undici would throw, taken for a network failure (retried, counted by the breaker).
      checkHeaderValue(name, value);
      headers[name] = value;
    }
    if (req.trace) addTraceHeaders(headers, req.trace);
    let body: string | undefined;
    if (t.body !== undefined && t.method !== 'GET' && t.method !== 'HEAD') {
      const rendered = renderJson(t.body, req.args);
      body = typeof rendered === 'string' ? rendered : JSON.stringify(rendered ?? null);
      headers['content-type'] ??= typeof rendered === 'string' ? 'text/plain; charset=utf-8' : 'application/json';
    }
    return { origin, path, headers, body };
  }

  /** The request of an OpenAPI operation (src/adapters/openapi-request.ts). */
  private fromPlan(plan: RequestPlan, req: AdapterRequest): BuiltRequest {
    const built = buildRequest(plan, req.args);
    const headers: Record<string, string> = { 'x-request-id': req.requestId, ...built.headers };
    if (req.trace) addTraceHeaders(headers, req.trace);
    return { ...built, headers };
  }

  /** The secrets an operation sends, beside the gateway's: masked in what an upstream answers. */
  private withPlanSecrets(plan: RequestPlan, secrets: ReadonlySet<string> | undefined): ReadonlySet<string> | undefined {
    const own = secretsOf(plan);
    if (own.length === 0 || own.every((s) => secrets?.has(s))) return secrets;
    return new Set([...(secrets ?? NO_SECRETS), ...own]);
  }

  async close(): Promise<void> {
    await Promise.all([this.dispatcher.close(), this.ownTokens ? this.tokens.close() : undefined]);
  }

  /**
   * Sends with `Authorization: Bearer` from the backend's credentials. A 401 drops the token; a
   * cached one (it may have been revoked early) is replaced once and the request sent again. The
   * token is masked in what the upstream answers, and a per-user token refused does not disable
   * the backend (only the gateway's own credentials do).
   */
  private async sendWithToken(
    creds: UpstreamCredentials,
    origin: string,
    path: string,
    t: HttpTarget,
    headers: Record<string, string>,
    body: string | undefined,
    req: AdapterRequest,
  ): Promise<{ answer: Answer; secrets: ReadonlySet<string> | undefined }> {
    const oauth = t.openapi?.auth.find((a) => a.kind === 'oauth2');
    const ask: CredentialRequest = {
      // An OpenAPI file's operations share a token per scheme and scopes; else one per backend definition.
      key: oauth?.kind === 'oauth2' ? oauth.tokenKey : `${req.tool.name}\0${req.backend.id}\0${req.backend.hash}`,
      what: `backend '${req.backend.id}' of '${req.tool.name}'`,
      upstream: new URL(path, origin),
      caller: req.caller,
      deadline: req.deadline,
    };
    const attempt = async (): Promise<{ bearer: Got; answer: Answer }> => {
      const bearer = await this.tokens.token(creds, ask);
      if (req.cancel.aborted) throw req.cancel.reason as Error;
      const answer = await this.send(origin, path, t, { ...headers, authorization: `Bearer ${bearer.token}` }, body, req);
      if (answer.status === 401) this.tokens.invalidate(creds, ask, bearer.token);
      return { bearer, answer };
    };
    let { bearer, answer } = await attempt();
    if (answer.status === 401 && creds.kind !== 'passthrough' && !bearer.fresh) ({ bearer, answer } = await attempt());
    answer = withoutToken(answer, bearer.token);
    if (answer.status < 400) return { answer, secrets: req.secrets };
    const secrets = new Set([...(req.secrets ?? NO_SECRETS), bearer.token]); // in every form the masking knows
    if (creds.kind !== 'clientCredentials') throw statusError(answer, secrets, false);
    return { answer, secrets };
  }

  private send(origin: string, path: string, t: HttpTarget, headers: Record<string, string>, body: string | undefined, req: AdapterRequest): Promise<Answer> {
    const exchange = new Exchange(t.maxResponseBytes, req.cancel);
    this.dispatcher.dispatch({ origin, path, method: t.method as Dispatcher.HttpMethod, headers, body }, exchange);
    return exchange.answer;
  }

  private split(t: HttpTarget, href: string): { origin: string; path: string } {
    const known = this.urls.get(t);
    if (known?.href === href) return known;
    const u = new URL(href);
    const parts = { href, origin: u.origin, path: `${u.pathname}${u.search}` };
    this.urls.set(t, parts);
    return parts;
  }
}

/**
 * One request's undici handler: collects the body under `max` bytes (a declared length over it is
 * refused before any body arrives), aborts the request when the call's Cancel fires, and settles
 * `answer` once. It is its own listener and settler: no closure per request.
 */
class Exchange implements Dispatcher.DispatchHandler, CancelListener, Settle<Answer> {
  readonly answer: Promise<Answer>;
  resolve!: (a: Answer) => void;
  reject!: (e: unknown) => void;
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private readonly chunks: Buffer[] = [];
  private total = 0;
  private controller: Dispatcher.DispatchController | undefined;
  private settled = false;

  constructor(
    private readonly max: number,
    private readonly cancel: Cancel,
  ) {
    this.answer = pending(this);
    cancel.listen(this);
  }

  cancelled(reason: Error): void {
    this.controller?.abort(reason);
    this.fail(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.settled) controller.abort(this.cancel.reason ?? new Error('aborted'));
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.status = statusCode;
    this.headers = headers;
    const declared = Number(headerText(headers['content-length']) || NaN);
    if (declared > this.max) this.refuse(controller);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.total += chunk.length;
    if (this.total > this.max) return this.refuse(controller);
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.settled) return;
    this.settled = true;
    this.cancel.unlisten(this);
    const bytes = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.total);
    this.resolve({ status: this.status, headers: this.headers, bytes });
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.fail(this.cancel.aborted ? (this.cancel.reason as Error) : networkError(err));
  }

  private refuse(controller: Dispatcher.DispatchController): void {
    const err = tooLarge(this.status, this.max);
    this.fail(err);
    controller.abort(err);
  }

  private fail(err: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.cancel.unlisten(this);
    this.reject(err);
  }
}

const TOKEN_MASK = '[REDACTED]';

const planSecretCache = new WeakMap<RequestPlan, readonly string[]>();
/** The secrets a plan sends, computed once per compiled operation. */
function secretsOf(plan: RequestPlan): readonly string[] {
  let known = planSecretCache.get(plan);
  if (!known) planSecretCache.set(plan, (known = planSecrets(plan)));
  return known;
}

/** The answer with every literal copy of `token` masked (rare: the bytes are searched, copied only on a hit). */
function withoutToken(answer: Answer, token: string): Answer {
  if (!answer.bytes.includes(token)) return answer;
  return { ...answer, bytes: Buffer.from(answer.bytes.toString('utf8').split(token).join(TOKEN_MASK)) };
}

function headerText(h: string | string[] | undefined): string {
  return (Array.isArray(h) ? h[0] : h) ?? '';
}

/** The attempt's trace context, unless the tool file sets that header itself (its value is kept). */
function addTraceHeaders(headers: Record<string, string>, trace: Readonly<Record<string, string>>): void {
  const own = new Set(Object.keys(headers).map((h) => h.toLowerCase()));
  for (const [name, value] of Object.entries(trace)) if (!own.has(name)) headers[name] = value;
}

function tooLarge(status: number, max: number): GatewayError {
  return new GatewayError('UPSTREAM_ERROR', `the upstream response is larger than ${max} bytes`, {
    details: [{ message: 'response too large', status, limitBytes: max }],
    upstream: { transient: false, noEffect: false, status },
  });
}

/** The body for error details: secrets masked in the whole body first, then cut (a cut must not leave a secret's prefix). */
function trim(bytes: Buffer, secrets: ReadonlySet<string> | undefined): string {
  return secretMatcher(secrets ?? NO_SECRETS).cut(bytes, TRIM_BYTES);
}

function statusError(answer: Answer, secrets: ReadonlySet<string> | undefined, mayDisable = true): GatewayError {
  const { status, bytes } = answer;
  const auth = status === 401 || status === 403;
  const upstream: UpstreamFailure = {
    transient: status >= 500 || status === 429,
    noEffect: auth,
    disable: auth && mayDisable,
    status,
    ...retryAfter(answer.headers['retry-after']),
  };
  return new GatewayError('UPSTREAM_ERROR', `the upstream answered ${status}`, {
    details: [{ message: `upstream status ${status}`, status, body: trim(bytes, secrets) }],
    upstream,
  });
}

function retryAfter(h: string | string[] | undefined): { retryAfterMs?: number } {
  const v = Array.isArray(h) ? h[0] : h;
  if (!v) return {};
  const secs = Number(v);
  if (Number.isFinite(secs)) return { retryAfterMs: Math.max(0, secs * 1000) };
  const at = Date.parse(v);
  return Number.isNaN(at) ? {} : { retryAfterMs: Math.max(0, at - Date.now()) };
}

function networkError(e: unknown): Error {
  const code = errorCode(e);
  const noEffect = code !== undefined && NO_EFFECT_CODES.has(code);
  return new GatewayError(noEffect ? 'UNAVAILABLE' : 'UPSTREAM_ERROR', `the upstream could not be reached (${code ?? 'network error'})`, {
    details: [{ message: (e as Error).message, errno: code }],
    upstream: { transient: true, noEffect },
    cause: e,
  });
}

function errorCode(e: unknown): string | undefined {
  for (let cur: unknown = e; cur instanceof Error; cur = (cur as Error & { cause?: unknown }).cause) {
    const code = (cur as Error & { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET') return code;
    if (cur instanceof AggregateError && cur.errors[0] instanceof Error) return errorCode(cur.errors[0]);
  }
  return undefined;
}
