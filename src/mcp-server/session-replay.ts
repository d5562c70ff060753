import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import { SESSION_REVISIONS } from './era.js';
import type { InitParams } from './session-store.js';

/** A synthetic JSON-RPC id: never one a client's request can collide with in this fresh Server. */
const REPLAY_ID = 'toolgate-session-replay';

/** POSTs one message into the session's own transport, as its client once did, and reads the answer out (discarded). */
async function post(transport: WebStandardStreamableHTTPServerTransport, id: string, version: string, message: Record<string, unknown>): Promise<void> {
  const headers: Record<string, string> = { accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-session-id': id };
  if (message['method'] !== 'initialize') headers['mcp-protocol-version'] = version;
  const res = await transport.handleRequest(new Request('http://localhost/mcp', { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', ...message }) }));
  await res.text(); // the answer's stream ends once the Server answered: its state is set by then
  if (res.status >= 300) throw new Error(`session replay of ${String(message['method'])} answered ${res.status}`);
}

/**
 * Brings a fresh transport and Server to the state a session's client left them in on another
 * replica, through their public entry points only: the stored `initialize` (the transport takes
 * the session id from its generator, which returns the stored one; the Server records the client's
 * capabilities, info and negotiated version) and `notifications/initialized`, then `extra`
 * messages (a stored `logging/setLevel`). The client sends nothing again.
 */
export async function replayInto(transport: WebStandardStreamableHTTPServerTransport, id: string, init: InitParams | undefined, ...extra: Record<string, unknown>[]): Promise<void> {
  const version = init && SESSION_REVISIONS.includes(init.protocolVersion) ? init.protocolVersion : (SESSION_REVISIONS[0] as string);
  if (init) {
    await post(transport, id, version, { id: REPLAY_ID, method: 'initialize', params: init });
    await post(transport, id, version, { method: 'notifications/initialized' });
  }
  for (const m of extra) await post(transport, id, version, { id: `${REPLAY_ID}-${m['method'] as string}`, ...m });
}
