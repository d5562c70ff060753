import { mkdirSync, createWriteStream, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import type { AuditRecord, AuditSink } from './types.js';

/** Append-only JSONL audit file. Writes are queued on one stream; flush waits for the OS to have them. */
export class FileAuditSink implements AuditSink {
  private readonly stream: WriteStream;
  private closed = false;

  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.stream = createWriteStream(path, { flags: 'a' });
    this.stream.on('error', () => {
      /* surfaced by flush(); a write error must not crash the gateway */
    });
  }

  write(record: AuditRecord): void {
    if (this.closed) throw new Error('audit sink is closed');
    this.stream.write(JSON.stringify(record) + '\n');
  }

  flush(): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.stream.writableLength === 0) return resolve();
      this.stream.write('', (err) => (err ? reject(err) : resolve()));
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await new Promise<void>((resolve) => this.stream.end(resolve));
  }
}
