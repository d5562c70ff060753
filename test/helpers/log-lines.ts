import { Writable } from 'node:stream';

/** A pino destination that keeps every log line written to it, in order, in `lines`. */
export function lineSink(lines: string[]): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
}
