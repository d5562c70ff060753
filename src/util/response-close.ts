import type { ServerResponse } from 'node:http';

/** An object told when its response closes (after its end, or when its connection went first). */
export interface ResponseCloseListener {
  responseClosed(res: ServerResponse): void;
}

const LISTENERS = Symbol('toolgate.responseClose');
type Tracked = ServerResponse & { [LISTENERS]?: ResponseCloseListener[] };

/** One 'close' listener function for every response; the response points at its listener objects. */
function onClose(this: Tracked): void {
  const listeners = this[LISTENERS];
  if (listeners) for (const l of listeners) l.responseClosed(this);
}

/**
 * Tells `l` when `res` closes. Per request, without a closure: the drain's count and the client
 * watch both listen this way, with one 'close' listener on the response between them.
 */
export function whenClosed(res: ServerResponse, l: ResponseCloseListener): void {
  const tracked = res as Tracked;
  const listeners = tracked[LISTENERS];
  if (listeners) listeners.push(l);
  else {
    tracked[LISTENERS] = [l];
    res.on('close', onClose);
  }
}
