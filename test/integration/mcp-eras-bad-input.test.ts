import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoTool, startGateway, type TestGateway } from '../helpers/app.js';
import { parseExposition, sampleValue } from '../helpers/metrics.js';
import { rawMcpSession } from '../helpers/mcp-raw.js';

const AGENT = 'bad-agent-key-0001';
const PEER = 'bad-peer-key-00002';
const MODERN = '2026-07-28';
const V = 'io.modelcontextprotocol/protocolVersion';

/** A well-formed 2026-07-28 per-request envelope (`_meta`), naming `version`. */
const envelope = (version: unknown = MODERN, caps: Record<string, unknown> = {}) => ({ [V]: version, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': caps });
/** The standard headers a 2026-07-28 request carries (version, method, name). */
const modernHeaders = (method: string, name?: string, version = MODERN) => ({ 'mcp-protocol-version': version, 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}) });

interface Answer {
  status: number;
  body: { error?: { code: number; message: string; data?: Record<string, unknown> }; result?: Record<string, unknown> };
}

/** Raw HTTP (fetch, no SDK), bounded: a hang fails the test instead of stalling it. */
describe('/mcp refuses bad protocol input with the specified error, counted, never a hang or a 500', () => {
  let gw: TestGateway;
  let base: string;

  const post = async (body: unknown, headers: Record<string, string> = {}, key = AGENT): Promise<Answer> => {
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${key}`, ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
      signal: AbortSignal.timeout(5000),
    });
    const text = await res.text();
    expect(res.status).toBeLessThan(500);
    // A JSON answer, or one SSE message (a 2025 session's POST answers on a stream).
    const json = res.headers.get('content-type')?.includes('text/event-stream') ? (/^data: (.*)$/m.exec(text)?.[1] ?? '{}') : text;
    return { status: res.status, body: JSON.parse(json) as Answer['body'] };
  };
  const errors = async (reason: string) => sampleValue(parseExposition((await gw.app.gw.metrics.exposition()).text), 'toolgate_mcp_protocol_errors_total', { reason }) ?? 0;
  /** Runs `send`, and checks it moved the reason's count by exactly one. */
  const counted = async <T,>(reason: string, send: () => Promise<T>): Promise<T> => {
    const before = await errors(reason);
    const out = await send();
    expect(await errors(reason)).toBe(before + 1);
    return out;
  };

  beforeAll(async () => {
    gw = await startGateway({
      config: {
        auth: {
          keys: [
            { id: 'agent-1', key: AGENT, roles: ['agent'] },
            { id: 'agent-3', key: PEER, roles: ['agent'] }, // sees the same tools: another key, not a narrower one
          ],
        },
        mcp: { elicitApproval: { tools: ['files.*'] } },
      },
      tools: {
        'echo.yaml': echoTool('debug.echo'),
        'delete.yaml': { ...echoTool('files.delete'), sideEffect: 'destructive' },
        'wipe.yaml': { ...echoTool('ops.wipe'), sideEffect: 'destructive' },
      },
    });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => gw.close());

  it('a well-formed server/discover names 2026-07-28 (the probe that used to get 400 Server not initialized)', async () => {
    const ok = await post({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope() } }, modernHeaders('server/discover'));
    expect(ok.status).toBe(200);
    expect(ok.body.result).toMatchObject({ supportedVersions: [MODERN], capabilities: { tools: { listChanged: true } } });
  });

  it('a malformed server/discover: -32602 for a bad envelope, -32600 for params that are no object, -32020 when headers and body disagree', async () => {
    const missing = await counted('invalid_params', () => post({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: { [V]: MODERN } } }, modernHeaders('server/discover')));
    expect(missing).toMatchObject({ status: 400, body: { error: { code: -32602 } } });
    expect(missing.body.error?.message).toMatch(/clientCapabilities: missing/);
    const numeric = await counted('invalid_params', () => post({ jsonrpc: '2.0', id: 2, method: 'server/discover', params: { _meta: envelope(20260728) } }, modernHeaders('server/discover')));
    expect(numeric).toMatchObject({ status: 400, body: { error: { code: -32602 } } });
    const notObject = await counted('invalid_request', () => post({ jsonrpc: '2.0', id: 3, method: 'server/discover', params: 'all of them' }, modernHeaders('server/discover')));
    expect(notObject).toMatchObject({ status: 400, body: { error: { code: -32600 } } });
    const noMethodHeader = await counted('header_mismatch', () => post({ jsonrpc: '2.0', id: 4, method: 'server/discover', params: { _meta: envelope() } }, { 'mcp-protocol-version': MODERN }));
    expect(noMethodHeader).toMatchObject({ status: 400, body: { error: { code: -32020 } } });
    const wrongMethodHeader = await counted('header_mismatch', () => post({ jsonrpc: '2.0', id: 5, method: 'server/discover', params: { _meta: envelope() } }, modernHeaders('tools/list')));
    expect(wrongMethodHeader).toMatchObject({ status: 400, body: { error: { code: -32020 } } });
  });

  it('an unknown protocol version, in the envelope or in the header: 400, -32022 naming what /mcp speaks (or the 2025 transport\'s 400)', async () => {
    const inEnvelope = await counted('unsupported_version', () => post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope('2099-01-01') } }, modernHeaders('tools/list', undefined, '2099-01-01')));
    expect(inEnvelope).toMatchObject({ status: 400, body: { error: { code: -32022, data: { supported: [MODERN], requested: '2099-01-01' } } } });
    const headerOnly = await counted('unsupported_version', () => post({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, { 'mcp-protocol-version': 'banana' }));
    expect(headerOnly.status).toBe(400);
    expect(headerOnly.body.error?.message).toMatch(/banana/);
    const { session } = await rawMcpSession(base, AGENT);
    const onSession = await counted('unsupported_version', () => post({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} }, { 'mcp-session-id': session, 'mcp-protocol-version': '2099-01-01' }));
    expect(onSession.status).toBe(400);
    expect(onSession.body.error?.message).toMatch(/Unsupported protocol version/);
  });

  it('a revision /mcp does not speak: 2025-11-25 in a Modern envelope is -32022; 2024-11-05 (the SSE transport\'s) on a session is 400; initialize naming it is offered 2025-11-25', async () => {
    const legacyInEnvelope = await counted('unsupported_version', () => post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope('2025-11-25') } }, modernHeaders('tools/list', undefined, '2025-11-25')));
    expect(legacyInEnvelope).toMatchObject({ status: 400, body: { error: { code: -32022, data: { supported: [MODERN] } } } });
    const { session } = await rawMcpSession(base, AGENT);
    const sseRevision = await counted('unsupported_version', () => post({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, { 'mcp-session-id': session, 'mcp-protocol-version': '2024-11-05' }));
    expect(sseRevision.status).toBe(400);
    const init = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'old', version: '1' } } });
    expect(init.status).toBe(200);
    expect(init.body.result?.['protocolVersion']).toBe('2025-11-25');
  });

  it('a Modern request carrying an Mcp-Session-Id: 400 -32600 (2026-07-28 has no sessions), even with a live session id', async () => {
    const { session } = await rawMcpSession(base, AGENT);
    for (const id of [session, 'made-up-session']) {
      const res = await counted('session_on_modern', () => post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } }, { ...modernHeaders('tools/list'), 'mcp-session-id': id }));
      expect(res).toMatchObject({ status: 400, body: { error: { code: -32600 } } });
      expect(res.body.error?.message).toMatch(/no sessions/);
    }
  });

  it('a 2025 request without a session id (not initialize): 400 -32000; a GET stream without one too', async () => {
    const res = await counted('session_required', () => post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, { 'mcp-protocol-version': '2025-11-25' }));
    expect(res).toMatchObject({ status: 400, body: { error: { code: -32000, message: expect.stringMatching(/Mcp-Session-Id header is required/) } } });
    const get = await counted('session_required', async () => {
      const r = await fetch(`${base}/mcp`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${AGENT}` }, signal: AbortSignal.timeout(5000) });
      return { status: r.status, body: (await r.json()) as Answer['body'] };
    });
    expect(get).toMatchObject({ status: 400, body: { error: { code: -32000 } } });
  });

  it('a stale session id: 404 -32001 (the client starts a new session), on POST, GET and DELETE', async () => {
    const { session, post: onSession } = await rawMcpSession(base, AGENT);
    await (await fetch(`${base}/mcp`, { method: 'DELETE', headers: { authorization: `Bearer ${AGENT}`, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } })).text();
    const res = await counted('session_not_found', async () => {
      const r = await onSession({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, {}, AbortSignal.timeout(5000));
      return { status: r.status, body: (await r.json()) as Answer['body'] };
    });
    expect(res).toMatchObject({ status: 404, body: { error: { code: -32001 } } });
    for (const method of ['GET', 'DELETE']) {
      const r = await counted('session_not_found', () => fetch(`${base}/mcp`, { method, headers: { accept: 'text/event-stream', authorization: `Bearer ${AGENT}`, 'mcp-session-id': session }, signal: AbortSignal.timeout(5000) }));
      expect(r.status).toBe(404);
      await r.text();
    }
  });

  /** A Modern gated call that answers input_required; its requestState. */
  async function gated(key: string, tool = 'files.delete'): Promise<string> {
    const first = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: { path: '/x' }, _meta: envelope(MODERN, { elicitation: { form: {} } }) } }, modernHeaders('tools/call', tool), key);
    expect(first.status).toBe(200);
    expect(first.body.result).toMatchObject({ resultType: 'input_required', inputRequests: { approve: { method: 'elicitation/create' } } });
    return first.body.result?.['requestState'] as string;
  }
  const retry = (key: string, requestState: string, tool = 'files.delete') =>
    post(
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: tool, arguments: { path: '/x' }, requestState, inputResponses: { approve: { action: 'accept', content: { approve: true } } }, _meta: envelope(MODERN, { elicitation: { form: {} } }) },
      },
      modernHeaders('tools/call', tool),
      key,
    );
  const confirmationOf = (state: string) => state.replace(/^tg1\./, '');

  it('requestState cannot approve another key\'s call, one the client was never asked about, nor be forged: -32602, and the confirmation stays pending', async () => {
    const state = await gated(AGENT);
    const id = confirmationOf(state);
    expect((await gw.app.gw.confirmations.get(id))?.status).toBe('pending');

    const stolen = await retry(PEER, state);
    expect(stolen.body.error).toMatchObject({ code: -32602, message: 'Invalid or expired requestState' });
    for (const forged of ['tg1.cf_notarealconfirmation', 'cf_' + id, 'anything', '']) {
      const res = await retry(AGENT, forged);
      expect(res.body.error?.code, forged).toBe(-32602);
    }
    // The state of one tool's call does not approve another tool.
    expect((await retry(AGENT, state, 'debug.echo')).body.error?.code).toBe(-32602);
    // A confirmation of a tool the operator did not open to client approval cannot be approved by a crafted state.
    const wipe = await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'ops.wipe', arguments: {}, _meta: envelope(MODERN, { elicitation: { form: {} } }) } }, modernHeaders('tools/call', 'ops.wipe'));
    const wipeId = /confirmation (cf_[A-Za-z0-9_-]+)/.exec(JSON.stringify(wipe.body.result))?.[1];
    expect((await retry(AGENT, `tg1.${wipeId}`, 'ops.wipe')).body.error?.code).toBe(-32602);
    expect((await gw.app.gw.confirmations.get(wipeId!))?.status).toBe('pending');

    // A confirmation the client was never asked about: one opened over REST, or one whose result only
    // named it (the client declared no elicitation), cannot be approved by a state that names it.
    const rest = await gw.call('files.delete', { path: '/rest' }, { key: AGENT });
    const restId = (rest.json() as { confirmation: { id: string } }).confirmation.id;
    expect((await retry(AGENT, `tg1.${restId}`)).body.error?.code).toBe(-32602);
    const named = await post({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'files.delete', arguments: { path: '/named' }, _meta: envelope() } }, modernHeaders('tools/call', 'files.delete'));
    const namedId = /confirmation (cf_[A-Za-z0-9_-]+)/.exec(JSON.stringify(named.body.result))?.[1];
    expect(namedId).toBeDefined();
    expect((await retry(AGENT, `tg1.${namedId}`)).body.error?.code).toBe(-32602);
    for (const other of [restId, namedId!]) expect((await gw.app.gw.confirmations.get(other))?.status).toBe('pending');

    expect((await gw.app.gw.confirmations.get(id))?.status).toBe('pending');
    // The owner's own answer still works, once; a replay is told it was decided and runs nothing again.
    const own = await retry(AGENT, state);
    expect(own.body.result).toMatchObject({ resultType: 'complete', isError: false });
    expect((await gw.app.gw.confirmations.get(id))?.status).toBe('approved');
    const replay = await retry(AGENT, state);
    expect(JSON.stringify(replay.body.result)).toMatch(/already decided/);
    const runs = (await gw.audit()).filter((r) => r['event'] === 'call' && r['outcome'] === 'ok' && r['confirmationId'] === id);
    expect(runs).toHaveLength(1);
  });

  it('nesting: a Modern message nested past the limit is 400 -32600 (too_deep); a call\'s deep arguments are the pipeline\'s tool error, in both Modern paths', async () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 1100; i++) deep = { d: deep };
    const list = await counted('too_deep', () => post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope(), cursor: deep } }, modernHeaders('tools/list')));
    expect(list).toMatchObject({ status: 400, body: { error: { code: -32600 } } });
    for (const meta of [envelope(), { ...envelope(), progressToken: 'p' }]) {
      const res = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'debug.echo', arguments: { deep }, _meta: meta } }, modernHeaders('tools/call', 'debug.echo'));
      expect(res.status).toBe(200);
      expect(res.body.result).toMatchObject({ isError: true });
      expect(JSON.stringify(res.body.result)).toMatch(/INVALID_ARGUMENTS|too deep|nest/i);
    }
  });

  it('malformed JSON and batches of bad messages are JSON-RPC errors, counted, never 500', async () => {
    const parse = await counted('parse_error', () => post('{"jsonrpc": "2.0", "id": 1, "method": ', modernHeaders('tools/list')));
    expect(parse).toMatchObject({ status: 400, body: { error: { code: -32700 } } });
    const notRpc = await post({ hello: 'world', params: { _meta: envelope() } }, modernHeaders('tools/list'));
    expect(notRpc.status).toBe(400);
    expect(notRpc.body.error?.code).toBeLessThan(0);
  });
});
