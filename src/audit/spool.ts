import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { appendFile, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * A local JSONL file of records that could not reach the Redis stream yet, oldest first.
 * Only one promise chain (the stream sink's) touches it, so reads and rewrites never race appends.
 */
export class Spool {
  private lines: number;

  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
    // A spool left by an earlier run is replayed too.
    this.lines = existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean).length : 0;
  }

  get size(): number {
    return this.lines;
  }

  async append(lines: readonly string[]): Promise<void> {
    if (lines.length === 0) return;
    await appendFile(this.path, lines.map((l) => `${l}\n`).join(''));
    this.lines += lines.length;
  }

  async read(): Promise<string[]> {
    if (this.lines === 0 || !existsSync(this.path)) return [];
    return (await readFile(this.path, 'utf8')).split('\n').filter(Boolean);
  }

  /** Keeps only `rest` (the records not yet delivered): replaced atomically, removed when empty. */
  async keep(rest: readonly string[]): Promise<void> {
    if (rest.length === 0) {
      if (existsSync(this.path)) await unlink(this.path);
    } else {
      const tmp = `${this.path}.tmp`;
      await writeFile(tmp, rest.map((l) => `${l}\n`).join(''));
      await rename(tmp, this.path);
    }
    this.lines = rest.length;
  }
}
