import type { JSONRPCMessage, MessageExtraInfo, Transport, TransportSendOptions } from '@modelcontextprotocol/client';
import { describeError } from './errors.js';
import { ProcessGroupStdioTransport } from './stdio-transport.js';

/** Observes every JSON-RPC message of a session: debug logs, tests. Must not throw. */
export type McpTraceFn = (direction: 'in' | 'out', message: JSONRPCMessage) => void;

/** A message could not be handed to the transport: the session is broken, not the tool. */
export class TransportSendError extends Error {
  override readonly name = 'TransportSendError';
  constructor(cause: unknown) {
    super(describeError(cause), { cause });
  }
}

/**
 * Wraps any transport to trace messages both ways and to mark send failures, so that a
 * request that failed in the transport (refused connection, dead pipe, HTTP error) can be
 * told apart from one the server answered with an error. It also keeps what a
 * `server/discover` answer said the server speaks, for the words of a version mismatch.
 */
export class GuardedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  /** The revision the client agreed with the server in `initialize` (the SDK tells every transport). */
  protocolVersion: string | undefined;
  /** `supportedVersions` of the last `server/discover` answer, if one came. */
  discoveredVersions: string[] | undefined;
  /**
   * Off during connect: the SDK's probe reads the transport's own errors (an HTTP 400 to
   * `server/discover` is legacy evidence), so they must reach it unwrapped.
   */
  markSendErrors = false;
  private readonly discoverIds = new Set<string | number>();
  /** A progress notification was handed to the SDK in this tick (its handler has not run yet). */
  private progressQueued = false;

  constructor(
    readonly inner: Transport,
    private readonly trace?: McpTraceFn,
  ) {
    inner.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
      this.trace?.('in', message);
      this.noteAnswer(message);
      // The SDK runs a notification's handler a microtask later but settles a response at once,
      // dropping its request's progress handler: a server's last progress, written just before
      // its result (one stdio chunk, one HTTP read), was lost. Such a response waits behind it.
      if (this.progressQueued && !('method' in message)) {
        queueMicrotask(() => this.onmessage?.(message, extra));
        return;
      }
      if ('method' in message && message.method === 'notifications/progress' && !this.progressQueued) {
        this.progressQueued = true;
        queueMicrotask(() => (this.progressQueued = false));
      }
      this.onmessage?.(message, extra);
    };
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error: Error) => this.onerror?.(error);
  }

  /** One request stream per request (Streamable HTTP): the SDK cancels a Modern request by closing it. */
  get hasPerRequestStream(): boolean | undefined {
    return this.inner.hasPerRequestStream;
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
    this.inner.setProtocolVersion?.(version);
  }

  setSupportedProtocolVersions(versions: string[]): void {
    this.inner.setSupportedProtocolVersions?.(versions);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    this.trace?.('out', message);
    if ('method' in message && message.method === 'server/discover' && 'id' in message) {
      this.discoverIds.add(message.id);
    }
    try {
      await this.inner.send(message, options);
    } catch (err) {
      throw this.markSendErrors ? new TransportSendError(err) : err;
    }
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private noteAnswer(message: JSONRPCMessage): void {
    if (!('id' in message) || message.id === undefined || !this.discoverIds.has(message.id)) return;
    this.discoverIds.delete(message.id);
    const versions = 'result' in message ? (message.result as { supportedVersions?: unknown }).supportedVersions : undefined;
    if (Array.isArray(versions)) this.discoveredVersions = versions.filter((v): v is string => typeof v === 'string');
  }
}

/**
 * The same over our own stdio child. The SDK tells a stdio transport by its `pid` and `stderr`
 * members: on stdio a probe that meets silence means a legacy server, on HTTP an outage.
 */
export class GuardedStdioTransport extends GuardedTransport {
  constructor(
    override readonly inner: ProcessGroupStdioTransport,
    trace?: McpTraceFn,
  ) {
    super(inner, trace);
  }

  get pid(): number | undefined {
    return this.inner.pid;
  }

  get stderr(): null {
    return null;
  }
}

/** Wraps a fresh transport in the guard that fits it. */
export function guard(inner: Transport, trace?: McpTraceFn): GuardedTransport {
  return inner instanceof ProcessGroupStdioTransport ? new GuardedStdioTransport(inner, trace) : new GuardedTransport(inner, trace);
}
