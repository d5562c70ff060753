import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Socket } from 'node:net';
import { request } from 'node:http';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { rawMcpSession } from '../helpers/mcp-raw.js';

const KEEP_ALIVE_MS = 300;
const HEADERS_MS = 400;
const REQUEST_MS = 800;
/** Node closes an idle keep-alive socket 1 s after the advertised timeout (its own buffer against races). */
const NODE_KEEP_ALIVE_BUFFER_MS = 1000;

/** A raw TCP connection to the gateway: what it received, and when the server closed it. */
class RawConn {
  readonly socket: Socket;
  received = '';
  readonly opened = Date.now();
  closedAt: number | undefined;
  readonly closed: Promise<void>;

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.setEncoding('utf8');
    this.socket.on('data', (d: string) => (this.received += d));
    this.socket.on('error', () => undefined); // a reset after the server's answer is fine
    this.closed = new Promise((resolve) => this.socket.once('close', () => ((this.closedAt = Date.now()), resolve())));
  }

  /** Resolves once `n` complete responses (each with a content-length body) have arrived. */
  async responses(n: number): Promise<void> {
    const complete = () => {
      let rest = this.received;
      for (let i = 0; i < n; i++) {
        const end = rest.indexOf('\r\n\r\n');
        if (end < 0) return false;
        const length = Number(/content-length: (\d+)/i.exec(rest.slice(0, end))?.[1] ?? 0);
        if (rest.length < end + 4 + length) return false;
        rest = rest.slice(end + 4 + length);
      }
      return true;
    };
    while (!complete()) {
      if (this.closedAt !== undefined) throw new Error(`closed before ${n} responses: ${this.received.slice(0, 300)}`);
      await new Promise<void>((resolve) => this.socket.once('data', () => resolve()).once('close', () => resolve()));
    }
  }
}

/** Waits for every promise, failing after `ms` with what was still pending. */
async function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)));
  try {
    return await Promise.race([p, limit]);
  } finally {
    clearTimeout(timer);
  }
}

const errorBody = (raw: string) => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as { error: { code: string; retryable: boolean } };

describe('server timeouts: idle, slow and streaming connections', () => {
  let gw: TestGateway;
  let port: number;
  const open: RawConn[] = [];
  const conn = () => {
    const c = new RawConn(port);
    open.push(c);
    return c;
  };

  beforeAll(async () => {
    gw = await startGateway({
      config: { server: { keepAliveTimeoutMs: KEEP_ALIVE_MS, headersTimeoutMs: HEADERS_MS, requestTimeoutMs: REQUEST_MS } },
      tools: {
        'delay.yaml': {
          name: 'debug.delay',
          description: 'waits ms milliseconds',
          sideEffect: 'none',
          timeoutMs: 10_000,
          inputSchema: { type: 'object', properties: { ms: { type: 'integer', minimum: 0, maximum: 5000 } } },
          backends: [{ id: 'b', builtin: 'delay' }],
        },
      },
    });
    const base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    port = Number(new URL(base).port);
  });
  afterAll(async () => {
    for (const c of open) c.socket.destroy();
    await gw.close();
  });

  it('the defaults: keep-alive 5 s, headers 10 s, whole request 30 s', async () => {
    const plain = await startGateway();
    try {
      expect(plain.app.server.keepAliveTimeout).toBe(5000);
      expect(plain.app.server.headersTimeout).toBe(10_000);
      expect(plain.app.server.requestTimeout).toBe(30_000);
    } finally {
      await plain.close();
    }
  });

  it('closes 50 idle keep-alive connections once keepAliveTimeoutMs has passed, and keeps them until then', async () => {
    const conns = Array.from({ length: 50 }, () => conn());
    await Promise.all(conns.map((c) => new Promise((resolve) => c.socket.once('connect', resolve))));
    // One of them reused at once: the connection is kept alive between requests.
    const reused = conns[0]!;
    reused.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await reused.responses(1);
    reused.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    for (const c of conns.slice(1)) c.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await Promise.all(conns.map((c, i) => c.responses(i === 0 ? 2 : 1)));
    const answered = Date.now();
    for (const c of conns) expect(c.received).toMatch(/^HTTP\/1\.1 200 [\s\S]*connection: keep-alive/i);

    await within(KEEP_ALIVE_MS + NODE_KEEP_ALIVE_BUFFER_MS + 2500, 'all 50 closed by the server', Promise.all(conns.map((c) => c.closed)));
    // Closed by the server's keep-alive timer, not at once after the answer.
    for (const c of conns) expect(c.closedAt! - answered).toBeGreaterThanOrEqual(KEEP_ALIVE_MS - 50);
  });

  it('cuts a slowloris client sending its headers a byte at a time after headersTimeoutMs, with 408 in the one error shape', async () => {
    const slow = conn();
    await new Promise((resolve) => slow.socket.once('connect', resolve));
    slow.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    const drip = setInterval(() => slow.socket.writable && slow.socket.write('a'), 40);
    const silent = conn(); // connects and says nothing at all
    try {
      await within(HEADERS_MS + 2500, 'the slow client cut', Promise.all([slow.closed, silent.closed]));
    } finally {
      clearInterval(drip);
    }
    for (const c of [slow, silent]) {
      expect(c.closedAt! - c.opened).toBeGreaterThanOrEqual(HEADERS_MS - 50);
      expect(c.received).toMatch(/^HTTP\/1\.1 408 /);
      expect(errorBody(c.received).error).toMatchObject({ code: 'REQUEST_TIMEOUT', retryable: true });
    }
  });

  it('cuts a request whose body trickles in after requestTimeoutMs (408)', async () => {
    const slow = conn();
    slow.socket.write('POST /v1/tools/debug.delay/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"arguments":{');
    const drip = setInterval(() => slow.socket.writable && slow.socket.write(' '), 40);
    try {
      await within(REQUEST_MS + 2500, 'the slow upload cut', slow.closed);
    } finally {
      clearInterval(drip);
    }
    expect(slow.closedAt! - slow.opened).toBeGreaterThanOrEqual(REQUEST_MS - 50);
    expect(errorBody(slow.received).error.code).toBe('REQUEST_TIMEOUT');
  });

  it('leaves streams and long calls running past every timeout: /v1/calls/{id}/events, GET /sse, GET /mcp, a 1.5 s call', async () => {
    const base = `http://127.0.0.1:${port}`;
    // A background call that takes 2.5 s (longer than keep-alive + buffer, headers and request timeouts).
    const started = await fetch(`${base}/v1/tools/debug.delay/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', prefer: 'respond-async' },
      body: JSON.stringify({ arguments: { ms: 2500 } }),
    });
    expect(started.status).toBe(202);
    const { callId } = (await started.json()) as { callId: string };

    /** Opens an SSE stream with node:http; resolves with its text once it ends, tracks whether it is still open. */
    const stream = (path: string, headers: Record<string, string> = {}) => {
      const s = { text: '', open: true, first: undefined as Promise<void> | undefined, ended: undefined as Promise<void> | undefined, destroy: () => undefined as void };
      const req = request(`${base}${path}`, { headers: { accept: 'text/event-stream', ...headers } });
      s.destroy = () => void req.destroy();
      s.first = new Promise<void>((resolveFirst, reject) => {
        s.ended = new Promise<void>((resolveEnd) => {
          req.on('error', reject);
          req.on('response', (res) => {
            expect(res.statusCode).toBe(200);
            res.setEncoding('utf8');
            res.on('data', (d: string) => ((s.text += d), resolveFirst()));
            res.on('close', () => ((s.open = false), resolveEnd()));
          });
        });
      });
      req.end();
      return s;
    };
    const events = stream(`/v1/calls/${callId}/events`);
    const sse = stream('/sse');
    const mcp = await rawMcpSession(base, 'any');
    const mcpGet = stream('/mcp', { 'mcp-session-id': mcp.session, 'mcp-protocol-version': '2025-06-18' });
    await Promise.all([events.first, sse.first, mcpGet.first]);

    // Meanwhile a synchronous call of 1.5 s on a raw keep-alive connection.
    const c = conn();
    const body = JSON.stringify({ arguments: { ms: 1500 } });
    c.socket.write(`POST /v1/tools/debug.delay/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    await within(5000, 'the long call answered', c.responses(1));
    expect(c.received).toMatch(/^HTTP\/1\.1 200 /);

    await within(6000, 'the events stream to finish', events.ended!);
    expect(events.text).toMatch(/event: finished/);
    // The other streams were open all along (2.5 s): nothing cut them.
    expect(sse.open).toBe(true);
    expect(mcpGet.open).toBe(true);
    expect(sse.text).toMatch(/event: endpoint/);
    sse.destroy();
    mcpGet.destroy();
  });
});
