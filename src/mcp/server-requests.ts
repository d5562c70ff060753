import { AsyncLocalStorage } from 'node:async_hooks';
import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode, type Client, type ClientCapabilities, type Progress } from '@modelcontextprotocol/client';
import type { ClientRequests } from '../tools/schema.js';

/**
 * Server-to-client requests through the pool (SPEC §6, MCP): an upstream server's
 * `sampling/createMessage`, `elicitation/create` and `roots/list`, made while it serves a
 * `tools/call`, go to the downstream client whose call it is, and its answer goes back.
 *
 * Correlation. One pooled session serves many callers, and a 2025 server's request names no
 * request it belongs to. Over Streamable HTTP it comes on the POST stream of the `tools/call`
 * (2026-07-28: in that call's `input_required` answer), and the client transport reads that
 * stream inside the call's own async context: an AsyncLocalStorage set around each call names
 * the call the request came with. Connections are opened outside any call's context
 * (`outsideCalls`), so the standalone GET stream and a stdio pipe carry no call: there the only
 * safe rule is "exactly one call in flight on this session"; with none or several the request is
 * refused. A request is never sent to another caller's client.
 */

export type ServerRequestKind = 'sampling' | 'elicitation' | 'roots';

export const SERVER_REQUEST_METHODS = {
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
  'roots/list': 'roots',
} as const satisfies Record<string, ServerRequestKind>;
export type ServerRequestMethod = keyof typeof SERVER_REQUEST_METHODS;

/** What the pool declares to every upstream: only then will a server ask. */
export const POOL_CLIENT_CAPABILITIES: ClientCapabilities = { sampling: {}, elicitation: { form: {}, url: {} }, roots: {} };

/** JSON-RPC codes of the gateway's refusals. -1 is what the spec names for a sampling request the user rejected. */
export const REFUSED_BY_POLICY = -1;
/** The call the request belonged to ended before the client answered (cancelled, timed out, finished). */
export const CALL_ENDED = -32000;
/** The SDK's code for a request that timed out. */
const REQUEST_TIMEOUT = -32001;

/** A JSON-RPC error the gateway answers a server request with. */
export interface Refusal {
  code: number;
  message: string;
}

/** The downstream MCP client of one call (toolgate's /mcp session or request). */
export interface ClientChannel {
  /** Why this client cannot take the request (it lacks the capability or the mode), or undefined. */
  refusal(kind: ServerRequestKind, params: Record<string, unknown>): Refusal | undefined;
  /** Sends the request to the client; resolves with its result (rejects with a ProtocolError for its error). */
  request(method: ServerRequestMethod, params: Record<string, unknown>, opts: ChannelRequestOptions): Promise<Record<string, unknown>>;
}

export interface ChannelRequestOptions {
  /** Aborted when the server cancels its request or the call ends: the client is told (notifications/cancelled). */
  signal: AbortSignal;
  timeoutMs: number;
  /** The client's progress on the request, passed on to the server (when it asked with a progress token). */
  onProgress?: ((p: Progress) => void) | undefined;
}

/** Who made the call a server request belongs to (for the audit record). */
export interface ServerRequestWho {
  caller?: string | undefined;
  tool?: string | undefined;
  requestId?: string | undefined;
  sessionId?: string | undefined;
}

/** What one call brings to the server's requests: its client (none for REST callers) and the tool's own policy. */
export interface CallClientRequests {
  channel: ClientChannel | undefined;
  policy: ClientRequests | undefined;
  who: ServerRequestWho;
}

export type ServerRequestOutcome = 'ok' | 'refused' | 'error' | 'cancelled';
export type ServerRequestReason = 'no_call' | 'ambiguous' | 'no_client' | 'no_capability' | 'policy';

/** One server request as the audit records it: never the prompt, the form or the answer. */
export interface ServerRequestEvent extends ServerRequestWho {
  server: string;
  kind: ServerRequestKind;
  outcome: ServerRequestOutcome;
  reason?: ServerRequestReason | undefined;
  /** The JSON-RPC error code the server got, when not ok. */
  code?: number | undefined;
  /** sampling: the maxTokens sent to the client, and what the server asked when the policy capped it. */
  maxTokens?: number | undefined;
  maxTokensAsked?: number | undefined;
  durationMs: number;
}

/**
 * One call in flight on a session. Its signal is made only when a relayed request asks for it:
 * most calls see no server request, and an AbortController with a listener per call was part
 * of the pool's regression after the relay came in (docs/benchmarks.md, "Relay cost").
 */
export class InFlightCall {
  private controller: AbortController | undefined;
  private ended = false;
  private endReason: unknown;

  constructor(
    readonly relay: CallClientRequests | undefined,
    readonly deadline: number,
    private readonly callSignal: AbortSignal,
  ) {}

  /** Aborted when the call is cancelled or settles: its relayed requests end with it. */
  get signal(): AbortSignal {
    if (this.controller) return this.controller.signal;
    const controller = (this.controller = new AbortController());
    const callSignal = this.callSignal;
    if (this.ended) controller.abort(this.endReason ?? callEnded());
    else if (callSignal.aborted) controller.abort(callSignal.reason);
    else callSignal.addEventListener('abort', () => this.end(callSignal.reason), { once: true });
    return controller.signal;
  }

  end(reason?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.endReason = reason;
    this.controller?.abort(reason ?? callEnded());
  }
}

/** The reason a call's signal ends with when it settled: made only then (an Error's stack costs ≈ 7 µs a call, profiled). */
function callEnded(): Error {
  return new Error('the call ended');
}

/** A 2026-07-28 call's input request the gateway could not answer (refused, or the client failed): the call fails. */
export class InputRefused extends Error {
  override readonly name = 'InputRefused';
}

const current = new AsyncLocalStorage<InFlightCall>();

/** Runs `fn` outside any call's context: what a connection opens there (streams, pipes) belongs to no call. */
export function outsideCalls<T>(fn: () => T): T {
  return current.exit(fn);
}

/** A server file's policy with the tool's own over it, per kind. */
export function mergePolicy(server: ClientRequests | undefined, tool: ClientRequests | undefined): ClientRequests {
  return {
    sampling: { ...server?.sampling, ...tool?.sampling },
    elicitation: { ...server?.elicitation, ...tool?.elicitation },
    roots: { ...server?.roots, ...tool?.roots },
  };
}

/** One session's handlers for the server's requests, and the calls in flight on it. */
export class ServerRequestRelay {
  private readonly calls = new Set<InFlightCall>();

  constructor(
    private readonly server: string,
    private readonly serverPolicy: () => ClientRequests | undefined,
    private readonly onEvent: ((event: ServerRequestEvent) => void) | undefined,
  ) {}

  install(client: Client): void {
    for (const method of Object.keys(SERVER_REQUEST_METHODS) as ServerRequestMethod[]) {
      client.setRequestHandler(method, (request, ctx) => this.handle(method, request.params ?? {}, ctx.mcpReq) as never);
    }
  }

  /**
   * Runs one call, tracked as in flight; with `inContext`, with its context set too, so that the
   * server's requests on the call's own stream find it. Only a 2025-era Streamable HTTP session
   * reads a stream inside a call's context (the POST stream of the `tools/call`); stdio, the
   * legacy SSE transport and the GET stream are read in the context their connection was opened
   * in (`outsideCalls`: none), and a 2026-07-28 call gets its input requests in its own answer.
   * Elsewhere the context would never be read, and entering it is not free on Node 20: the first
   * `AsyncLocalStorage.run` turns on a promise hook for every promise of the process
   * (docs/benchmarks.md, "Relay cost": the pool's `echo` 1.35× the commit before the relay).
   */
  async run<T>(call: InFlightCall, fn: () => Promise<T>, inContext: boolean): Promise<T> {
    this.calls.add(call);
    try {
      return await (inContext ? current.run(call, fn) : fn());
    } finally {
      this.calls.delete(call);
      call.end();
    }
  }

  private find(): InFlightCall | 'no_call' | 'ambiguous' {
    const mine = current.getStore();
    // The stream of a call that has ended: nothing to relate the request to.
    if (mine) return this.calls.has(mine) ? mine : 'no_call';
    if (this.calls.size === 1) return this.calls.values().next().value as InFlightCall;
    return this.calls.size === 0 ? 'no_call' : 'ambiguous';
  }

  /**
   * 2026-07-28: the input requests of a call's `input_required` answer, each relayed like a request
   * (the call is known: the answer came to it); resolves with the responses to send back. A refused
   * or failed one fails the call, as the SDK's own fulfilment does (the revision has no error slot).
   */
  async fulfil(call: InFlightCall, inputRequests: Record<string, unknown>): Promise<Record<string, unknown>> {
    const req: UpstreamRequestContext = { signal: call.signal, notify: () => Promise.resolve() };
    const entries = Object.entries(inputRequests).map(async ([key, entry]) => {
      const e = entry !== null && typeof entry === 'object' ? (entry as { method?: unknown; params?: unknown }) : {};
      const method = typeof e.method === 'string' && e.method in SERVER_REQUEST_METHODS ? (e.method as ServerRequestMethod) : undefined;
      if (!method) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `input request '${key}' is not sampling/createMessage, elicitation/create or roots/list`);
      const params = e.params !== null && typeof e.params === 'object' && !Array.isArray(e.params) ? (e.params as Record<string, unknown>) : {};
      try {
        return [key, await this.relayFor(call, method, params, req)] as const;
      } catch (err) {
        throw new InputRefused(`the ${method} it asked for (input request '${key}') was not answered: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
    });
    return Object.fromEntries(await Promise.all(entries));
  }

  private handle(method: ServerRequestMethod, raw: Record<string, unknown>, req: UpstreamRequestContext): Promise<Record<string, unknown>> {
    return this.relayFor(this.find(), method, raw, req);
  }

  private async relayFor(found: InFlightCall | 'no_call' | 'ambiguous', method: ServerRequestMethod, raw: Record<string, unknown>, req: UpstreamRequestContext): Promise<Record<string, unknown>> {
    const kind = SERVER_REQUEST_METHODS[method];
    const started = Date.now();
    const who = typeof found === 'string' ? {} : found.relay?.who ?? {};
    const report = (outcome: ServerRequestOutcome, extra: Partial<ServerRequestEvent> = {}) =>
      this.onEvent?.({ server: this.server, kind, outcome, ...who, ...extra, durationMs: Date.now() - started });
    const refuse = (reason: ServerRequestReason, refusal: Refusal, extra: Partial<ServerRequestEvent> = {}): never => {
      report('refused', { reason, code: refusal.code, ...extra });
      throw new ProtocolError(refusal.code, refusal.message);
    };
    if (found === 'no_call') refuse('no_call', { code: ProtocolErrorCode.MethodNotFound, message: `${method} refused by the gateway: no call of this session is in flight to relate it to` });
    if (found === 'ambiguous') refuse('ambiguous', { code: ProtocolErrorCode.MethodNotFound, message: `${method} refused by the gateway: several calls are in flight on this session and the request names none of them` });
    const call = found as InFlightCall;
    const channel = call.relay?.channel;
    if (!channel) refuse('no_client', { code: ProtocolErrorCode.MethodNotFound, message: `${method} refused by the gateway: the caller of this tool is not an MCP client and cannot answer it` });
    const policy: { allow?: boolean; maxTokens?: number } = mergePolicy(this.serverPolicy(), call.relay?.policy)[kind] ?? {};
    const { params, asked, sent } = capped(kind, raw, policy);
    const tokens = { maxTokens: sent, ...(asked !== sent ? { maxTokensAsked: asked } : {}) };
    if (policy.allow === false) refuse('policy', { code: REFUSED_BY_POLICY, message: `${method} refused by the gateway's policy for this tool` }, tokens);
    const lacking = channel!.refusal(kind, params);
    if (lacking) refuse('no_capability', lacking, tokens);

    const link = new AbortController();
    const stop = (reason: unknown) => link.abort(reason);
    const upstream = req.signal;
    const onUp = () => stop(upstream.reason);
    const onCall = () => stop(call.signal.reason);
    upstream.addEventListener('abort', onUp, { once: true });
    call.signal.addEventListener('abort', onCall, { once: true });
    if (upstream.aborted) onUp();
    if (call.signal.aborted) onCall();
    const token = progressToken(raw);
    try {
      const result = await channel!.request(method, params, {
        signal: link.signal,
        timeoutMs: Math.max(1, call.deadline - Date.now()),
        onProgress: token === undefined ? undefined : (p) => notifyProgress(req, token, p),
      });
      report('ok', tokens);
      return result;
    } catch (err) {
      const answer = asProtocolError(err, link.signal.aborted);
      report(link.signal.aborted ? 'cancelled' : 'error', { code: answer.code, ...tokens });
      throw answer;
    } finally {
      upstream.removeEventListener('abort', onUp);
      call.signal.removeEventListener('abort', onCall);
    }
  }
}

/** The parts of the SDK's handler context the relay uses. */
interface UpstreamRequestContext {
  signal: AbortSignal;
  notify: (notification: { method: 'notifications/progress'; params: Record<string, unknown> }) => Promise<void>;
}

/** The params sent on (the server's progress token left out: the gateway's own request has its own), capped by the policy. */
function capped(kind: ServerRequestKind, raw: Record<string, unknown>, policy: { maxTokens?: number }) {
  const { _meta, ...rest } = raw as { _meta?: Record<string, unknown> } & Record<string, unknown>;
  const params: Record<string, unknown> = { ...rest };
  if (_meta && typeof _meta === 'object') {
    const { progressToken: _token, ...meta } = _meta;
    if (Object.keys(meta).length > 0) params['_meta'] = meta;
  }
  if (kind !== 'sampling') return { params, asked: undefined, sent: undefined };
  const asked = typeof rest['maxTokens'] === 'number' ? rest['maxTokens'] : undefined;
  const cap = policy.maxTokens;
  const sent = cap !== undefined && (asked === undefined || asked > cap) ? cap : asked;
  if (sent !== undefined) params['maxTokens'] = sent;
  return { params, asked, sent };
}

function progressToken(raw: Record<string, unknown>): string | number | undefined {
  const meta = raw['_meta'];
  const token = meta && typeof meta === 'object' ? (meta as Record<string, unknown>)['progressToken'] : undefined;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}

function notifyProgress(req: UpstreamRequestContext, token: string | number, p: Progress): void {
  const params = { progressToken: token, progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), ...(p.message !== undefined ? { message: p.message } : {}) };
  try {
    // A 2026-07-28 input request has no live peer request to relate a notification to: the SDK throws.
    void req.notify({ method: 'notifications/progress', params }).catch(() => undefined);
  } catch {
    // nothing to tell
  }
}

/** The client's error as the server gets it: its own JSON-RPC error, or the gateway's words for a timeout or an ended call. */
function asProtocolError(err: unknown, ended: boolean): ProtocolError {
  if (err instanceof ProtocolError) return err;
  if (ended) return new ProtocolError(CALL_ENDED, 'the call this request belonged to ended (cancelled, timed out or finished) before the client answered');
  if (err instanceof SdkError && err.code === SdkErrorCode.RequestTimeout) return new ProtocolError(REQUEST_TIMEOUT, "the MCP client did not answer within the call's time");
  return new ProtocolError(ProtocolErrorCode.InternalError, 'the MCP client could not be asked (connection lost)');
}
