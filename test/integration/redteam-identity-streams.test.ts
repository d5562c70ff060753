import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/app.js';
import { TestIssuer } from '../helpers/issuer.js';
import { httpTool } from '../helpers/app.js';
import { API_KEY, OIDC_TOOLS, issuerEntry, startOidcGateway } from '../helpers/oidc-gateway.js';
import { Upstream } from '../helpers/upstream.js';
import { untilAsync } from '../helpers/wait.js';

const MODERN = '2026-07-28';
const V = 'io.modelcontextprotocol/protocolVersion';
const envelope = () => ({ [V]: MODERN, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} });

/** Reads a stream in the background: its text so far, and whether it has ended. */
function tap(res: Response): { text: string; ended: boolean } {
  const seen = { text: '', ended: false };
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as ReadableStream<Uint8Array>) seen.text += decoder.decode(chunk);
    } catch {
      // ended by the gateway or the test
    }
    seen.ended = true;
  })();
  return seen;
}

/**
 * Red team, issue 23: a long-lived stream opened with an access token ends when that token
 * expires (on dd5365e each of these stayed open after exp, delivering notifications to a caller
 * whose authority had lapsed). API-key streams are untouched.
 */
describe('red team: streams do not outlive the token that opened them', () => {
  let idp: TestIssuer;
  let gw: TestGateway;
  let base: string;
  const aborts: AbortController[] = [];
  const LIFETIME_S = 2;

  beforeAll(async () => {
    idp = await TestIssuer.start();
    gw = await startOidcGateway([issuerEntry(idp, { defaultTools: ['*'] })]);
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    for (const ac of aborts) ac.abort();
    await gw.close();
    await idp.close();
  });

  const open = async (url: string, init: RequestInit): Promise<Response> => {
    const ac = new AbortController();
    aborts.push(ac);
    return fetch(`${base}${url}`, { ...init, signal: ac.signal });
  };

  /** Opens the three kinds of stream with one bearer: legacy /sse, a 2025 session's GET, a 2026-07-28 listen. */
  async function streams(bearer: string) {
    const auth = { authorization: `Bearer ${bearer}` };
    const sse = await open('/sse', { headers: { ...auth, accept: 'text/event-stream' } });
    expect(sse.status).toBe(200);
    const init = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
    });
    expect(init.status).toBe(200);
    await init.text();
    const sid = init.headers.get('mcp-session-id') as string;
    const session = { ...auth, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    await fetch(`${base}/mcp`, { method: 'POST', headers: { ...session, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
    const get = await open('/mcp', { headers: { ...session, accept: 'text/event-stream' } });
    expect(get.status).toBe(200);
    const listen = await open('/mcp', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': 'subscriptions/listen' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'subscriptions/listen', params: { _meta: envelope(), notifications: { toolsListChanged: true } } }),
    });
    expect(listen.status).toBe(200);
    return { sse: tap(sse), get: tap(get), listen: tap(listen) };
  }

  it('legacy /sse, the 2025 GET stream and the 2026-07-28 listen stream end at the token\'s exp; API-key streams stay', async () => {
    const token = await idp.mint({}, { expiresIn: LIFETIME_S });
    const t0 = Date.now();
    const mine = await streams(token);
    const keyed = await streams(API_KEY);
    await untilAsync(async () => mine.sse.text.includes('endpoint') && mine.listen.text.includes('acknowledged'), 'the streams opened', 3000);
    expect([mine.sse.ended, mine.get.ended, mine.listen.ended]).toEqual([false, false, false]);
    await untilAsync(async () => mine.sse.ended && mine.get.ended && mine.listen.ended, 'the token\'s streams ended', (LIFETIME_S + 4) * 1000);
    // Not before the token expired.
    expect(Date.now() - t0).toBeGreaterThanOrEqual((LIFETIME_S - 1) * 1000);
    expect([keyed.sse.ended, keyed.get.ended, keyed.listen.ended]).toEqual([false, false, false]);
  });
});

describe('red team: one person cannot end another\'s streams through a shared client id', () => {
  it('with claims.id: client_id, erin opening 32 listen streams ends her own oldest, not frank\'s', async () => {
    const idp = await TestIssuer.start();
    const gw = await startOidcGateway([issuerEntry(idp, { claims: { id: 'client_id' }, defaultTools: ['*'] })]);
    const base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    const aborts: AbortController[] = [];
    const listen = async (token: string, id: number) => {
      const ac = new AbortController();
      aborts.push(ac);
      const res = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': 'subscriptions/listen' },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { _meta: envelope(), notifications: { toolsListChanged: true } } }),
        signal: ac.signal,
      });
      expect(res.status).toBe(200);
      return tap(res);
    };
    try {
      const frank = await listen(await idp.mint({ sub: 'frank', client_id: 'cli-a' }), 0);
      const erin = await idp.mint({ sub: 'erin', client_id: 'cli-a' });
      const hers: { text: string; ended: boolean }[] = [];
      for (let i = 1; i <= 33; i++) hers.push(await listen(erin, i));
      await untilAsync(async () => hers[0]?.ended === true, 'erin\'s oldest stream ended', 3000);
      expect(frank.ended).toBe(false);
    } finally {
      for (const ac of aborts) ac.abort();
      await gw.close();
      await idp.close();
    }
  });
});

describe('red team: a call\'s event stream ends with the token that opened it', () => {
  it('GET /v1/calls/{id}/events of a long call closes at the token\'s exp; the call itself goes on', async () => {
    const idp = await TestIssuer.start();
    const up = await new Upstream().start();
    up.on(() => undefined); // never answers: the call runs until its timeout
    const gw = await startOidcGateway([issuerEntry(idp, { defaultTools: ['*'] })], {
      tools: { ...OIDC_TOOLS, 'long.yaml': httpTool('jobs.long', `${up.url}/long`, { async: true, timeoutMs: 20_000 }) },
    });
    const base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    const ac = new AbortController();
    try {
      const token = await idp.mint({}, { expiresIn: 2 });
      const started = await fetch(`${base}/v1/tools/jobs.long/call`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: {} }) });
      expect(started.status).toBe(202);
      const { callId } = (await started.json()) as { callId: string };
      const events = await fetch(`${base}/v1/calls/${callId}/events`, { headers: { authorization: `Bearer ${token}` }, signal: ac.signal });
      expect(events.status).toBe(200);
      const seen = tap(events);
      await untilAsync(async () => seen.text.includes('started'), 'the stream started', 2000);
      await untilAsync(async () => seen.ended, 'the stream ended at exp', 6000);
      expect(seen.text).not.toContain('finished');
      const rec = await gw.app.inject({ method: 'GET', url: `/v1/calls/${callId}`, headers: { authorization: `Bearer ${await idp.mint()}` } });
      expect(rec.json()).toMatchObject({ status: 'running' });
    } finally {
      ac.abort();
      await gw.close();
      await up.close();
      await idp.close();
    }
  });
});
