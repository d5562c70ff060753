import { randomBytes } from 'node:crypto';
import { inputRequired, ProtocolError, ProtocolErrorCode, type CallToolResult, type ClientCapabilities, type InputRequiredResult, type ServerContext } from '@modelcontextprotocol/server';
import { SERVER_REQUEST_METHODS, type ChannelRequestOptions, type ClientChannel, type ServerRequestMethod } from '../mcp/server-requests.js';
import { lacking } from './relay.js';

/**
 * Server requests for a 2026-07-28 client (no stream to send them on): the multi-round-trip input
 * request. A call whose MCP server asks its client something answers `input_required`, carrying
 * the server's requests as its `inputRequests`, while the call itself stays parked in this replica's
 * memory; the client's retry (the same tools/call with `inputResponses` and the `requestState`)
 * hands the answers to the server and waits again, for the result or the next request.
 *
 * The requestState names the parked call by 192 random bits and is worth nothing on its own: the
 * call is bound to the caller (its session key) and the tool; any other retry, an unknown or
 * expired state, or one reaching another replica is -32602, as for a forged state. A client that
 * does not come back within PARK_MS (or the call's own deadline) leaves the server's request
 * cancelled, and the call goes on without the answer.
 */

const STATE = 'tgr1.';
/** How long a parked call waits for its client's retry. */
export const PARK_MS = 60_000;
/** Parked calls per replica: past it, a new server request is refused (the call goes on without it). */
const MAX_PARKED = 10_000;

const parked = new Map<string, ParkedCall>();

interface Ask {
  key: string;
  method: ServerRequestMethod;
  params: Record<string, unknown>;
  resolve: (result: Record<string, unknown>) => void;
  reject: (err: unknown) => void;
}

const invalidState = () => new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid or expired requestState', { reason: 'invalid_request_state' });

/** One 2026-07-28 tools/call whose MCP server may ask its client for input. */
export class ParkedCall {
  readonly id = randomBytes(24).toString('base64url');
  private readonly controller = new AbortController();
  /** The server's requests not yet put to the client. */
  private readonly fresh = new Map<string, Ask>();
  /** Put to the client in an input_required answer, awaiting its retry. */
  private readonly asked = new Map<string, Ask>();
  private wake: (() => void) | undefined;
  private expiry: NodeJS.Timeout | undefined;
  private work: Promise<CallToolResult | InputRequiredResult> | undefined;
  private seq = 0;

  constructor(
    readonly owner: string,
    readonly tool: string,
    private readonly capabilities: () => ClientCapabilities | undefined,
  ) {}

  /** The call's own signal: aborted by the request (first or retry) that holds it, or when it was left waiting too long. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  readonly channel: ClientChannel = {
    refusal: (kind, params) => (parked.size >= MAX_PARKED ? { code: ProtocolErrorCode.InternalError, message: 'too many calls wait for their clients on this gateway' } : lacking(this.capabilities(), kind, params)),
    request: (method, params, o) => this.ask(method, params, o),
  };

  private ask(method: ServerRequestMethod, params: Record<string, unknown>, o: ChannelRequestOptions): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const key = `${SERVER_REQUEST_METHODS[method]}-${++this.seq}`;
      const settle = () => {
        this.fresh.delete(key);
        this.asked.delete(key);
        o.signal.removeEventListener('abort', onAbort);
      };
      const onAbort = () => {
        settle();
        reject(o.signal.reason);
      };
      const ask: Ask = { key, method, params, resolve: (r) => (settle(), resolve(r)), reject: (e) => (settle(), reject(e)) };
      if (o.signal.aborted) return reject(o.signal.reason);
      o.signal.addEventListener('abort', onAbort, { once: true });
      this.fresh.set(key, ask);
      this.wake?.();
    });
  }

  /**
   * Holds the call for one client request (`signal`: that request's; its end before an answer
   * cancels the call): the result when the call finishes, or an input request when its server asks.
   */
  async hold(run: () => Promise<CallToolResult | InputRequiredResult>, signal: AbortSignal | undefined): Promise<CallToolResult | InputRequiredResult> {
    clearTimeout(this.expiry);
    parked.delete(this.id);
    const onAbort = () => this.controller.abort(signal?.reason ?? new Error('the MCP client went away'));
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    try {
      this.work ??= run();
      const asked = new Promise<'asked'>((resolve) => {
        this.wake = () => resolve('asked');
        // Fresh requests, or ones the retry left unanswered: the client is asked (again) at once.
        if (this.fresh.size > 0 || this.asked.size > 0) resolve('asked');
      });
      const first = await Promise.race([this.work.then(() => 'done' as const, () => 'done' as const), asked]);
      this.wake = undefined;
      if (first === 'done') return await this.work;
      return this.park();
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** The server's open requests as the client's input requests; the call waits in memory for the retry. */
  private park(): InputRequiredResult {
    for (const [key, ask] of this.fresh) this.asked.set(key, ask);
    this.fresh.clear();
    const inputRequests: Record<string, { method: string; params: Record<string, unknown> }> = {};
    for (const [key, ask] of this.asked) inputRequests[key] = { method: ask.method, params: ask.params };
    parked.set(this.id, this);
    this.expiry = setTimeout(() => this.expire(), PARK_MS);
    this.expiry.unref();
    return inputRequired({ inputRequests: inputRequests as never, requestState: `${STATE}${this.id}` });
  }

  /** The client did not come back: its server's requests are cancelled, and the call goes on without them. */
  private expire(): void {
    if (parked.get(this.id) !== this) return;
    parked.delete(this.id);
    for (const ask of [...this.asked.values()]) ask.reject(new ProtocolError(-32001, 'the MCP client did not answer the input request in time'));
  }

  /** Hands the retry's answers to the server's requests they name; unanswered ones are asked again. */
  answer(responses: Record<string, unknown> | undefined): void {
    for (const [key, ask] of [...this.asked]) {
      const response = responses?.[key];
      if (response !== null && typeof response === 'object' && !Array.isArray(response)) ask.resolve(response as Record<string, unknown>);
    }
  }
}

/** Whether a tools/call's requestState is one of these (else another flow's, or a first call). */
export function isRelayState(state: unknown): state is string {
  return typeof state === 'string' && state.startsWith(STATE);
}

/**
 * The retry of a call that answered with the server's input requests: finds the parked call
 * (this caller's, this tool's) and gives it the answers; otherwise -32602.
 */
export async function resumeRelayed(ctx: ServerContext, owner: string, tool: (named: string) => string, name: string): Promise<CallToolResult | InputRequiredResult> {
  const state = ctx.mcpReq.requestState<unknown>();
  const id = isRelayState(state) ? state.slice(STATE.length) : '';
  const call = parked.get(id);
  if (!call || call.owner !== owner || call.tool !== tool(name)) throw invalidState();
  call.answer(ctx.mcpReq.inputResponses);
  return call.hold(() => Promise.reject(new Error('a parked call has no work')), ctx.mcpReq.signal);
}
