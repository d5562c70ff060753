import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import { describeError } from './errors.js';

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
 * told apart from one the server answered with an error.
 */
export class GuardedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  /** The revision the client agreed with the server in `initialize` (the SDK tells every transport). */
  protocolVersion: string | undefined;

  constructor(
    readonly inner: Transport,
    private readonly trace?: McpTraceFn,
  ) {
    inner.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
      this.trace?.('in', message);
      this.onmessage?.(message, extra);
    };
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error: Error) => this.onerror?.(error);
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
    this.inner.setProtocolVersion?.(version);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    this.trace?.('out', message);
    try {
      await this.inner.send(message, options);
    } catch (err) {
      throw new TransportSendError(err);
    }
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
