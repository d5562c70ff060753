import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** The client closed the connection before we answered. */
  aborted: boolean;
  /** When the request had fully arrived (epoch ms). */
  at: number;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>;

/** A real HTTP server on 127.0.0.1, port 0, that records what it was sent. */
export class Upstream {
  readonly seen: SeenRequest[] = [];
  private readonly server: Server;
  private handler: Handler = (_req, res) => {
    res.end('{}');
  };
  private abortWaiters: (() => void)[] = [];
  url = '';

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const entry: SeenRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString(), aborted: false, at: Date.now() };
        this.seen.push(entry);
        res.on('close', () => {
          if (!res.writableFinished) {
            entry.aborted = true;
            this.abortWaiters.splice(0).forEach((w) => w());
          }
        });
        void Promise.resolve(this.handler(req, res, entry.body)).catch(() => res.destroy());
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  on(handler: Handler): this {
    this.handler = handler;
    return this;
  }

  /** Resolves when the next in-flight request is abandoned by the client. */
  nextAbort(): Promise<void> {
    return new Promise((resolve) => this.abortWaiters.push(resolve));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
