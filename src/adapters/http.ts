import { Agent, request, type Dispatcher } from 'undici';
import { GatewayError, type UpstreamFailure } from '../errors.js';
import { render, renderJson } from '../util/template.js';
import type { HttpTarget } from '../tools/types.js';
import type { AdapterRequest, ToolAdapter, UpstreamPayload } from './types.js';

const TRIM_BYTES = 1024;
const NO_EFFECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/** Calls HTTP backends through one pooled undici Agent; the call's signal aborts the request. */
export class HttpAdapter implements ToolAdapter {
  private readonly dispatcher: Dispatcher;

  constructor(dispatcher?: Dispatcher) {
    // The tool's deadline governs; undici's own timeouts would cut long calls short.
    this.dispatcher = dispatcher ?? new Agent({ connections: 256, headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 10_000 });
  }

  async call(req: AdapterRequest): Promise<UpstreamPayload> {
    const t = req.backend.target as HttpTarget;
    const url = render(t.url, req.args, encodeURIComponent);
    const headers: Record<string, string> = { 'x-request-id': req.requestId };
    for (const [name, tpl] of t.headers) {
      const value = render(tpl, req.args);
      if (/[\r\n\0]/.test(value)) {
        throw new GatewayError('INVALID_ARGUMENTS', `an argument would put a line break into header '${name}'`, {
          details: [{ path: '/', message: 'header values cannot contain line breaks' }],
        });
      }
      headers[name] = value;
    }
    if (req.trace) addTraceHeaders(headers, req.trace);
    let body: string | undefined;
    if (t.body !== undefined && t.method !== 'GET' && t.method !== 'HEAD') {
      const rendered = renderJson(t.body, req.args);
      body = typeof rendered === 'string' ? rendered : JSON.stringify(rendered ?? null);
      headers['content-type'] ??= typeof rendered === 'string' ? 'text/plain; charset=utf-8' : 'application/json';
    }

    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, { method: t.method as Dispatcher.HttpMethod, headers, body, signal: req.signal, dispatcher: this.dispatcher });
    } catch (e) {
      throw networkError(e, req.signal);
    }
    const bytes = await readCapped(res, t.maxResponseBytes, req.signal);
    const contentType = String(res.headers['content-type'] ?? '');
    if (res.statusCode >= 400) throw statusError(res, bytes);
    if (/[/+]json\b/i.test(contentType)) {
      try {
        return { kind: 'json', data: bytes.length === 0 ? null : JSON.parse(bytes.toString('utf8')) };
      } catch {
        throw new GatewayError('UPSTREAM_ERROR', 'the upstream sent invalid JSON', {
          details: [{ message: 'invalid JSON body', status: res.statusCode, body: trim(bytes) }],
          upstream: { transient: false, noEffect: false, status: res.statusCode },
        });
      }
    }
    return { kind: 'text', text: bytes.toString('utf8'), contentType };
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }
}

/** The attempt's trace context, unless the tool file sets that header itself (its value is kept). */
function addTraceHeaders(headers: Record<string, string>, trace: Readonly<Record<string, string>>): void {
  const own = new Set(Object.keys(headers).map((h) => h.toLowerCase()));
  for (const [name, value] of Object.entries(trace)) if (!own.has(name)) headers[name] = value;
}

async function readCapped(res: Dispatcher.ResponseData, max: number, signal: AbortSignal): Promise<Buffer> {
  // A declared length is known up front: refused at once when over the cap, else read in one go
  // (undici's own body consumer, cheaper than iterating the stream).
  const declared = Number(res.headers['content-length']);
  if (Number.isInteger(declared) && declared >= 0) {
    if (declared > max) {
      res.body.destroy();
      throw tooLarge(res.statusCode, max);
    }
    try {
      return Buffer.from(await res.body.arrayBuffer());
    } catch (e) {
      throw networkError(e, signal);
    }
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of res.body) {
      total += (chunk as Buffer).length;
      if (total > max) {
        res.body.destroy();
        throw tooLarge(res.statusCode, max);
      }
      chunks.push(chunk as Buffer);
    }
  } catch (e) {
    if (e instanceof GatewayError) throw e;
    throw networkError(e, signal);
  }
  return Buffer.concat(chunks, total);
}

function tooLarge(status: number, max: number): GatewayError {
  return new GatewayError('UPSTREAM_ERROR', `the upstream response is larger than ${max} bytes`, {
    details: [{ message: 'response too large', status, limitBytes: max }],
    upstream: { transient: false, noEffect: false, status },
  });
}

function trim(bytes: Buffer): string {
  const text = bytes.subarray(0, TRIM_BYTES).toString('utf8');
  return bytes.length > TRIM_BYTES ? `${text}…` : text;
}

function statusError(res: Dispatcher.ResponseData, bytes: Buffer): GatewayError {
  const status = res.statusCode;
  const auth = status === 401 || status === 403;
  const upstream: UpstreamFailure = {
    transient: status >= 500 || status === 429,
    noEffect: auth,
    disable: auth,
    status,
    ...retryAfter(res.headers['retry-after']),
  };
  return new GatewayError('UPSTREAM_ERROR', `the upstream answered ${status}`, {
    details: [{ message: `upstream status ${status}`, status, body: trim(bytes) }],
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

function networkError(e: unknown, signal: AbortSignal): Error {
  if (signal.aborted) return signal.reason instanceof Error ? signal.reason : new Error('aborted');
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
