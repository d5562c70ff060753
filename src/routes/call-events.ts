import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Gateway } from '../gateway.js';
import { FINISHED, type CallRecord } from '../calls/records.js';
import type { CallEvent } from '../calls/background.js';
import { endAtExpiry } from '../auth/expiry.js';

const KEEPALIVE_MS = 15_000;
const POLL_MS = 1000;

function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Server-sent events of one call: `started` (its state now), `progress` (throttled by the runner
 * to about one every `calls.progressIntervalMs`), then `finished` (its final record) and the end
 * of the stream. A call running on this gateway is heard directly; one running on another
 * replica (or already over) is read from the shared store once a second.
 */
export function streamCallEvents(gw: Gateway, req: FastifyRequest, reply: FastifyReply, first: CallRecord, view: (r: CallRecord) => CallRecord): void {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no', // nginx must not hold the stream back
    'x-request-id': req.id,
  });
  res.write(frame('started', first));
  if (FINISHED.has(first.status)) {
    res.end(frame('finished', first));
    return;
  }
  let closed = false;
  const timers: NodeJS.Timeout[] = [];
  let unsubscribe: (() => void) | undefined;
  const finish = (rec: CallRecord) => {
    if (closed) return;
    res.end(frame('finished', view(rec)));
    stop();
  };
  const stop = () => {
    closed = true;
    unsubscribe?.();
    for (const t of timers) clearInterval(t);
  };
  req.raw.once('close', stop);
  res.once('close', stop);
  // No longer than the token that opened it (the call goes on); stopped first, so nothing writes after the end.
  endAtExpiry(req.caller, res, () => {
    stop();
    res.end();
  });
  timers.push(setInterval(() => res.write(': keep-alive\n\n'), KEEPALIVE_MS));

  unsubscribe = gw.background.subscribe(first.callId, (e: CallEvent) => {
    if (e.type === 'progress') res.write(frame('progress', e.progress));
    else finish(e.record);
  });
  if (unsubscribe) return;

  // Elsewhere: follow the shared record.
  let lastProgress = first.progress?.at;
  const poll = async () => {
    const raw = await gw.calls.get(first.callId);
    if (closed || !raw) return;
    const rec = await gw.background.settle(raw);
    if (rec.progress && rec.progress.at !== lastProgress) {
      lastProgress = rec.progress.at;
      res.write(frame('progress', rec.progress));
    }
    if (FINISHED.has(rec.status)) finish(rec);
  };
  timers.push(setInterval(() => void poll().catch(() => undefined), POLL_MS));
  void poll().catch(() => undefined);
}
