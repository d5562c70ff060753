import type { FetchLike } from '@modelcontextprotocol/client';

/** The most one message from an HTTP MCP server may take: as the stdio transport's read buffer (10 MiB). */
export const MAX_HTTP_MESSAGE_BYTES = 10 * 1024 * 1024;

const LF = 0x0a;
const NULL_BODY = new Set([101, 204, 205, 304]);

export class ResponseTooLargeError extends Error {
  override readonly name = 'ResponseTooLargeError';
  constructor(max: number) {
    super(`the MCP server sent a message larger than ${max} bytes`);
  }
}

/**
 * A fetch for the SDK's HTTP transports that bounds what a server may make the gateway hold:
 * a JSON answer as a whole, an SSE stream per event (the bytes since the last blank line), so a
 * long-lived stream lives on while no single message may grow without end. Past the bound the
 * body errors, and the SDK fails the request (the session breaks, as for any transport error).
 */
export function boundedFetch(max = MAX_HTTP_MESSAGE_BYTES, inner: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const res = await inner(url, init);
    if (!res.body || NULL_BODY.has(res.status)) return res;
    const sse = (res.headers.get('content-type') ?? '').toLowerCase().includes('text/event-stream');
    return new Response(res.body.pipeThrough(limit(max, sse)), { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

function limit(max: number, perEvent: boolean): TransformStream<Uint8Array, Uint8Array> {
  let size = 0;
  let lastWasLf = false;
  return new TransformStream({
    transform(chunk, controller) {
      if (perEvent) {
        // The end of an event: two line feeds in a row (CR LF CR LF ends with LF, CR, LF: the CR is skipped).
        let end = -1;
        for (let i = chunk.length - 1; i >= 0 && end < 0; i--) {
          if (chunk[i] !== LF) continue;
          const before = i > 0 ? chunk[i - 1] : lastWasLf ? LF : undefined;
          const beforeCr = i > 1 && chunk[i - 1] === 0x0d ? chunk[i - 2] : undefined;
          if (before === LF || beforeCr === LF) end = i;
        }
        size = end >= 0 ? chunk.length - end - 1 : size + chunk.length;
        lastWasLf = chunk.length > 0 ? chunk[chunk.length - 1] === LF : lastWasLf;
      } else {
        size += chunk.length;
      }
      if (size > max) controller.error(new ResponseTooLargeError(max));
      else controller.enqueue(chunk);
    },
  });
}
