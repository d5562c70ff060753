import type { FileHandle } from 'node:fs/promises';

/** A batch taken from a LineBuffer: its bytes as slices, and the chunks to give back once written. */
export interface LineBatch {
  readonly parts: Buffer[];
  readonly bytes: number;
  readonly chunks: Buffer[];
}

/**
 * Buffered JSONL lines as bytes, in reused chunks. Each line is encoded into a chunk as it is
 * added: no string outlives its call and no batch is joined into one large string (joining then
 * encoding cost ≈ 3 µs per record). Chunks come back after their batch is written and are reused:
 * a fresh buffer per batch lives through the write, gets promoted, and its memory is only freed by
 * a full GC, so an allocating sink made the heap run a mark-compact every second under load.
 */
export class LineBuffer {
  static readonly CHUNK = 64 * 1024;
  /** Spare chunks kept after a burst (at most KEEP × CHUNK bytes held idle). */
  static readonly KEEP = 32;
  private filled: Buffer[] = [];
  private filledChunks: Buffer[] = [];
  private bytes = 0;
  private chunk: Buffer | undefined;
  private used = 0;
  private readonly spare: Buffer[] = [];

  add(line: string): void {
    const need = Buffer.byteLength(line) + 1;
    if (this.chunk === undefined || this.used + need > this.chunk.length) {
      this.seal();
      this.chunk = need <= LineBuffer.CHUNK ? (this.spare.pop() ?? Buffer.allocUnsafeSlow(LineBuffer.CHUNK)) : Buffer.allocUnsafeSlow(need);
      this.used = 0;
    }
    this.used += this.chunk.write(line, this.used);
    this.chunk[this.used++] = 0x0a;
    this.bytes += need;
  }

  /** Everything added so far (undefined when nothing was); later lines go to other chunks. */
  take(): LineBatch | undefined {
    this.seal();
    if (this.filled.length === 0) return undefined;
    const batch = { parts: this.filled, bytes: this.bytes, chunks: this.filledChunks };
    this.filled = [];
    this.filledChunks = [];
    this.bytes = 0;
    return batch;
  }

  /** Gives a written batch's chunks back for reuse. */
  recycle(batch: LineBatch): void {
    for (const c of batch.chunks) if (c.length === LineBuffer.CHUNK && this.spare.length < LineBuffer.KEEP) this.spare.push(c);
  }

  private seal(): void {
    if (this.chunk === undefined) return;
    if (this.used > 0) {
      this.filled.push(this.chunk.subarray(0, this.used));
      this.filledChunks.push(this.chunk);
    } else if (this.chunk.length === LineBuffer.CHUNK) this.spare.push(this.chunk);
    this.chunk = undefined;
    this.used = 0;
  }
}

/** Writes every part, in order, at the file's end (a short write continues where it stopped). */
export async function writeAll(fh: FileHandle, parts: readonly Buffer[]): Promise<void> {
  let rest = parts;
  while (rest.length > 0) {
    const { bytesWritten } = await fh.writev(rest as Buffer[]);
    if (bytesWritten <= 0) throw new Error('the audit file accepted no bytes');
    rest = skip(rest, bytesWritten);
  }
}

function skip(parts: readonly Buffer[], n: number): Buffer[] {
  const out: Buffer[] = [];
  for (const p of parts) {
    if (n >= p.length) {
      n -= p.length;
      continue;
    }
    out.push(n > 0 ? p.subarray(n) : p);
    n = 0;
  }
  return out;
}
