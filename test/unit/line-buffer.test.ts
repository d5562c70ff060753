import { describe, expect, it } from 'vitest';
import { open, type FileHandle } from 'node:fs/promises';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LineBuffer, writeAll } from '../../src/audit/line-buffer.js';

/** A file handle that accepts at most `max` bytes per writev (a short write cannot be provoked on a real file). */
function shortWriter(max: number): { fh: FileHandle; written: () => string } {
  const out: Buffer[] = [];
  const fh = {
    async writev(parts: Buffer[]) {
      let room = max;
      for (const p of parts) {
        if (room === 0) break;
        const take = p.subarray(0, room);
        out.push(Buffer.from(take));
        room -= take.length;
      }
      return { bytesWritten: max - room, buffers: parts };
    },
  } as unknown as FileHandle;
  return { fh, written: () => Buffer.concat(out).toString('utf8') };
}

describe('audit line buffer', () => {
  it('gives back every line in order, one per line, with the exact byte count', () => {
    const buf = new LineBuffer();
    const lines = ['{"a":1}', '{"t":"天气"}', 'x'.repeat(LineBuffer.CHUNK - 3), '{"b":2}', 'y'.repeat(LineBuffer.CHUNK * 2)];
    for (const l of lines) buf.add(l);
    const batch = buf.take();
    const text = Buffer.concat(batch?.parts ?? []).toString('utf8');
    expect(text).toBe(lines.map((l) => `${l}\n`).join(''));
    expect(batch?.bytes).toBe(Buffer.byteLength(text));
    expect(buf.take()).toBeUndefined();
  });

  it('reuses a written batch\'s chunks instead of allocating new ones', () => {
    const buf = new LineBuffer();
    buf.add('first');
    const one = buf.take();
    if (!one) throw new Error('no batch');
    buf.recycle(one);
    buf.add('second');
    const two = buf.take();
    expect(two?.chunks[0]).toBe(one.chunks[0]);
    expect(Buffer.concat(two?.parts ?? []).toString()).toBe('second\n');
  });

  it('writeAll writes more parts than one writev takes (IOV_MAX is 1024) to a real file, in order', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'toolgate-lines-')), 'a.jsonl');
    const parts = Array.from({ length: 3000 }, (_, i) => Buffer.from(`{"n":${i}}\n`));
    const fh = await open(path, 'a');
    await writeAll(fh, parts);
    await fh.close();
    expect(readFileSync(path, 'utf8')).toBe(parts.map((p) => p.toString()).join(''));
  });

  it('writeAll continues after short writes and refuses a handle that takes nothing', async () => {
    const parts = [Buffer.from('hello '), Buffer.from('wide '), Buffer.from('world\n')];
    const w = shortWriter(4);
    await writeAll(w.fh, parts);
    expect(w.written()).toBe('hello wide world\n');
    await expect(writeAll(shortWriter(0).fh, parts)).rejects.toThrow('accepted no bytes');
  });
});
