import { mkdirSync, existsSync, statSync } from 'node:fs';
import { open, rename, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { AuditRecord, AuditSink } from './types.js';
import { LineBuffer, writeAll } from './line-buffer.js';
import { queryFiles, type AuditFilter, type AuditPage } from './query.js';

export interface FileSinkOptions {
  /** Rotate when the file would grow past this many bytes (0: never). */
  maxBytes?: number;
  /** Rotated files kept: path.1 (newest) … path.N. */
  keep?: number;
  /** Buffered records are written at least this often. */
  flushIntervalMs?: number;
}

/**
 * Append-only JSONL audit file. `write` only buffers (off the request path); one promise chain
 * writes batches in order, rotates by size between batches (never inside a line), and `durable`
 * waits until a record is on disk (fsync) for decisions that must survive a crash.
 */
export class FileAuditSink implements AuditSink {
  private handle: Promise<FileHandle>;
  private size: number;
  private readonly pending = new LineBuffer();
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly maxBytes: number;
  private readonly keep: number;
  private readonly flushIntervalMs: number;

  constructor(
    readonly path: string,
    opts: FileSinkOptions = {},
  ) {
    mkdirSync(dirname(path), { recursive: true });
    this.maxBytes = opts.maxBytes ?? 64 * 1024 * 1024;
    this.keep = opts.keep ?? 5;
    this.flushIntervalMs = opts.flushIntervalMs ?? 25;
    this.size = existsSync(path) ? statSync(path).size : 0;
    this.handle = open(path, 'a');
    this.handle.catch(() => undefined);
  }

  write(record: AuditRecord): void {
    if (this.closed) throw new Error('audit sink is closed');
    this.pending.add(JSON.stringify(record));
    this.timer ??= setTimeout(() => void this.flush().catch(() => undefined), this.flushIntervalMs);
  }

  /** Writes the record and resolves once it is on disk. */
  async durable(record: AuditRecord): Promise<void> {
    this.write(record);
    await this.flush();
    await (await this.handle).datasync();
  }

  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const next = this.chain.then(() => this.drain());
    this.chain = next.catch(() => undefined); // one failed batch must not stop later ones
    return next;
  }

  /** Writes what was buffered when this flush was asked for; later records go with the next flush. */
  private async drain(): Promise<void> {
    const batch = this.pending.take();
    if (batch === undefined) return;
    const { bytes } = batch;
    if (this.maxBytes > 0 && this.size > 0 && this.size + bytes > this.maxBytes) await this.rotate();
    const fh = await this.handle;
    try {
      await writeAll(fh, batch.parts);
    } finally {
      this.pending.recycle(batch);
    }
    this.size += bytes;
  }

  private async rotate(): Promise<void> {
    const fh = await this.handle;
    await fh.datasync();
    await fh.close();
    for (let i = this.keep - 1; i >= 1; i--) {
      if (existsSync(`${this.path}.${i}`)) await rename(`${this.path}.${i}`, `${this.path}.${i + 1}`);
    }
    await rename(this.path, `${this.path}.1`);
    this.handle = open(this.path, 'a');
    this.size = 0;
  }

  /** Files holding records, oldest first (for the audit query). */
  files(): string[] {
    const rotated = Array.from({ length: this.keep }, (_, i) => `${this.path}.${this.keep - i}`).filter((f) => existsSync(f));
    return [...rotated, this.path];
  }

  async query(filter: AuditFilter): Promise<AuditPage> {
    await this.flush();
    return queryFiles(this.files(), filter);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush();
    this.closed = true;
    const fh = await this.handle;
    await fh.datasync();
    await fh.close();
  }
}
