import { jsonRpcError } from './http.js';
import type { McpSession } from './sessions.js';
import { isEventId, type RedisSessionStore, type StreamNote } from './session-store.js';

const KEEPALIVE_MS = 25_000;
const encoder = new TextEncoder();

/** Stream entry ids compared as (milliseconds, sequence). */
function after(a: string, b: string): boolean {
  const [am = '0', as = '0'] = a.split('-');
  const [bm = '0', bs = '0'] = b.split('-');
  return BigInt(am) > BigInt(bm) || (am === bm && BigInt(as) > BigInt(bs));
}

const event = (id: string, message: unknown) => encoder.encode(`event: message\nid: ${id}\ndata: ${JSON.stringify(message)}\n\n`);

/**
 * A 2025 session's standalone GET stream when sessions are shared (Redis): every replica stores
 * the session's server-initiated messages in its Redis stream and publishes them on the
 * session's channel; the replica holding the GET stream listens there and writes them out. A
 * client that reconnects (to any replica) with `Last-Event-ID` first gets what it missed. A new
 * stream of the same session on this replica replaces the old one (a client reconnecting from a
 * half-dead connection); `closed` (the session ended anywhere) ends it.
 */
export async function sharedStream(store: RedisSessionStore, s: McpSession, lastEventId: string | null, onEnd: () => void): Promise<Response> {
  if (lastEventId !== null && !isEventId(lastEventId)) return jsonRpcError(400, -32000, 'Bad Request: Invalid event ID format (Last-Event-ID)');
  s.endStream?.();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let ended = false;
  let live = false;
  const held: { id: string; message: unknown }[] = [];
  let last = lastEventId ?? undefined;
  const write = (id: string, message: unknown) => {
    if (ended || (last !== undefined && !after(id, last))) return; // replayed already
    last = id;
    try {
      controller.enqueue(event(id, message));
    } catch {
      end();
    }
  };
  const heard = (note: StreamNote) => {
    if (note.t === 'closed') return end(true);
    if (live) write(note.id, note.message);
    else held.push({ id: note.id, message: note.message });
  };
  let unlisten: (() => void) | undefined;
  let keepalive: NodeJS.Timeout | undefined;
  function end(sessionGone = false): void {
    if (ended) return;
    ended = true;
    clearInterval(keepalive);
    unlisten?.();
    if (s.endStream === end) s.endStream = undefined;
    try {
      controller.close();
    } catch {
      // already closed or cancelled
    }
    if (sessionGone) onEnd();
  }
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c), cancel: () => end() });
  s.endStream = end;
  unlisten = await store.listen(s.hash, heard);
  try {
    if (lastEventId !== null) {
      for (const e of await store.eventsAfter(s.hash, lastEventId)) write(e.id, e.message);
    } else if (s.state.record.init.protocolVersion >= '2025-11-25') {
      // A priming event (2025-11-25: empty data): the client has an id to resume from before any message came.
      const primed = await store.lastEventId(s.hash);
      controller.enqueue(encoder.encode(`id: ${primed}\ndata: \n\n`));
      last = undefined; // a fresh stream writes every message it hears from now on
    }
  } catch (e) {
    end();
    throw e;
  }
  live = true;
  for (const h of held.splice(0)) write(h.id, h.message);
  keepalive = setInterval(() => {
    try {
      controller.enqueue(encoder.encode(': keepalive\n\n'));
    } catch {
      end();
    }
  }, KEEPALIVE_MS).unref();
  return new Response(body, {
    status: 200,
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no', 'mcp-session-id': s.id },
  });
}

/**
 * A notification the session must not get (again): an update of a URI it unsubscribed from on
 * another replica (this replica's subscription upstream outlives it until its next request
 * here), or a resources/prompts list_changed another replica's copy already sent within the
 * second (each replica hears its own upstream's; the client re-lists once either way).
 */
export async function suppressed(store: RedisSessionStore, hash: string, m: { method?: string; params?: { uri?: unknown } }): Promise<boolean> {
  if (m.method === 'notifications/resources/updated') return !(await store.get(hash))?.subscriptions.includes(String(m.params?.uri));
  if (m.method === 'notifications/resources/list_changed' || m.method === 'notifications/prompts/list_changed') return !(await store.once(hash, `${m.method}:${Math.floor(Date.now() / 1000)}`));
  return false;
}
