import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { ReadBuffer, serializeMessage, type JSONRPCMessage, type MessageExtraInfo, type Transport } from '@modelcontextprotocol/client';
import { endGroup, trackGroup, type GroupEnd } from './process-group.js';

/** How to start a stdio MCP server. */
export interface StdioChildOptions {
  command: string;
  args: readonly string[];
  /** Added to a minimal inherited environment (HOME, PATH, USER…), as the SDK does. */
  env: Readonly<Record<string, string>>;
  cwd?: string;
  /** Time between SIGTERM and SIGKILL to the process group. */
  killGraceMs: number;
  /** How much of the child's stderr to keep for error messages. */
  stderrTailBytes: number;
}

/** A message could not be written: the child is gone, so it certainly never read it. */
export class ChildGoneError extends Error {
  override readonly name = 'ChildGoneError';
}

/** How the child ended. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * An MCP stdio client transport over a child we spawn ourselves, in its own process group
 * (`detached: true`). Unlike the SDK's StdioClientTransport it ends the whole group on close
 * and when the server dies (no orphaned grandchildren), pipes stderr instead of inheriting it
 * and keeps its tail, and reports the exit promptly (on 'exit', not when every grandchild has
 * closed its copy of stdout).
 */
export class ProcessGroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  private child: ChildProcessWithoutNullStreams | undefined;
  private readonly readBuffer = new ReadBuffer();
  private readonly stderrChunks: Buffer[] = [];
  private stderrBytes = 0;
  private exitInfo: ChildExit | undefined;
  private groupEnded: Promise<GroupEnd> | undefined;
  private readonly exited: Promise<void>;
  private markExited: () => void = () => undefined;
  private closeReported = false;
  private stderrDone: Promise<void> = Promise.resolve();

  constructor(private readonly options: StdioChildOptions) {
    this.exited = new Promise((resolve) => {
      this.markExited = resolve;
    });
  }

  /** Pid of the server process, which is also its process group id. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** How the child ended, once it has. */
  get exit(): ChildExit | undefined {
    return this.exitInfo;
  }

  /** The last `stderrTailBytes` the child wrote to stderr. */
  get stderrTail(): string {
    return Buffer.concat(this.stderrChunks).toString('utf8');
  }

  /** Resolves when the child's stderr is closed (all of it read), or after `ms`. */
  async stderrEnded(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.stderrDone, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }

  async start(): Promise<void> {
    if (this.child) throw new Error('transport already started');
    const { command, args, env, cwd } = this.options;
    const child = spawn(command, [...args], {
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...getDefaultEnvironment(), ...env },
      ...(cwd === undefined ? {} : { cwd }),
      windowsHide: true,
    });
    this.child = child;
    child.stdout.on('data', (chunk: Buffer) => this.onStdout(chunk));
    child.stderr.on('data', (chunk: Buffer) => this.keepStderr(chunk));
    this.stderrDone = new Promise((resolve) => child.stderr.once('close', () => resolve()));
    // EPIPE after the child died: the exit handler reports it; here it must not crash us.
    child.stdin.on('error', (err) => this.onerror?.(err));
    child.once('exit', (code, signal) => {
      this.exitInfo = { code, signal };
      this.markExited();
      // The leader is gone; end whatever it left behind in its group.
      void this.endGroup();
      this.reportClose();
    });
    await new Promise<void>((resolve, reject) => {
      let spawned = false;
      child.once('spawn', () => {
        spawned = true;
        if (child.pid !== undefined) trackGroup(child.pid);
        resolve();
      });
      // Kept for the child's lifetime: an unhandled 'error' event would crash the gateway.
      child.on('error', (err) => {
        if (spawned) {
          this.onerror?.(err);
          return;
        }
        this.exitInfo ??= { code: null, signal: null };
        this.markExited();
        this.reportClose();
        reject(err);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.exitInfo || !stdin.writable) {
      return Promise.reject(new ChildGoneError('stdio server process is not running'));
    }
    // The first message of a turn of the event loop goes out at once; the others sent in that turn
    // follow in one write (under load, one wakeup of the server for many calls). Each promise
    // settles once its line is handed to the OS (or failed).
    return new Promise<void>((resolve, reject) => {
      const line = serializeMessage(message);
      if (this.turnStarted) {
        this.outbox.push({ line, resolve, reject });
        return;
      }
      this.turnStarted = true;
      setImmediate(this.flush);
      stdin.write(line, (err) => (err ? reject(err) : resolve()));
    });
  }

  private outbox: { line: string; resolve: () => void; reject: (err: Error) => void }[] = [];
  private turnStarted = false;

  private readonly flush = (): void => {
    this.turnStarted = false;
    const batch = this.outbox;
    if (batch.length === 0) return;
    this.outbox = [];
    const stdin = this.child?.stdin;
    if (!stdin || this.exitInfo || !stdin.writable) {
      const gone = new ChildGoneError('stdio server process is not running');
      for (const m of batch) m.reject(gone);
      return;
    }
    const text = batch.length === 1 ? (batch[0] as { line: string }).line : batch.map((m) => m.line).join('');
    stdin.write(text, (err) => {
      for (const m of batch) if (err) m.reject(err);
      else m.resolve();
    });
  };

  /** Ends the whole process group (SIGTERM, then SIGKILL after the grace) and waits for it. */
  async close(): Promise<void> {
    this.child?.stdin.end();
    const ending = this.endGroup();
    // Report at once so pending requests fail fast; the promise still waits for the group.
    this.reportClose();
    await ending;
  }

  private endGroup(): Promise<GroupEnd> {
    const pid = this.child?.pid;
    if (pid === undefined) return Promise.resolve({ forced: false, lingering: false });
    // Our own child is waited for too: it is a zombie until libuv reaps it and emits 'exit'.
    this.groupEnded ??= endGroup(pid, this.options.killGraceMs).then(async (end) => {
      await Promise.race([this.exited, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
      return end;
    });
    return this.groupEnded;
  }

  private reportClose(): void {
    if (this.closeReported) return;
    this.closeReported = true;
    this.readBuffer.clear();
    this.onclose?.();
  }

  private onStdout(chunk: Buffer): void {
    try {
      this.readBuffer.append(chunk);
    } catch (err) {
      // Over the buffer limit: the stream is unusable from here on.
      this.onerror?.(err as Error);
      void this.close();
      return;
    }
    for (;;) {
      try {
        const message = this.readBuffer.readMessage();
        if (message === null) return;
        this.onmessage?.(message);
      } catch (err) {
        // A non-JSON line (a server logging to stdout): report it, keep reading.
        this.onerror?.(err as Error);
      }
    }
  }

  private keepStderr(chunk: Buffer): void {
    this.stderrChunks.push(chunk);
    this.stderrBytes += chunk.length;
    const limit = this.options.stderrTailBytes;
    while (this.stderrBytes > limit && this.stderrChunks.length > 0) {
      const first = this.stderrChunks[0]!;
      const excess = this.stderrBytes - limit;
      if (first.length <= excess) {
        this.stderrChunks.shift();
        this.stderrBytes -= first.length;
      } else {
        this.stderrChunks[0] = first.subarray(excess);
        this.stderrBytes -= excess;
      }
    }
  }
}
