import type { FileProblem } from '../util/source.js';

/** The logger methods a reload report needs (pino's and Fastify's loggers both fit). */
export interface ReloadLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ReloadSummary {
  generation: number;
  tools: number;
  added: readonly string[];
  changed: readonly string[];
  removed: readonly string[];
  errors: readonly FileProblem[];
}

/** One line per reload; with problems, each file, JSON path and message (the file kept its last good version). */
export function logReload(log: ReloadLogger, r: ReloadSummary): void {
  const fields = { generation: r.generation, tools: r.tools, added: r.added, changed: r.changed, removed: r.removed };
  if (r.errors.length === 0) {
    log.info(fields, 'tools.d reloaded');
    return;
  }
  const errors = r.errors.map((e) => ({ file: e.file, ...(e.line !== undefined ? { line: e.line } : {}), path: e.path, message: e.message }));
  log.warn({ ...fields, errors }, `tools.d reloaded with ${errors.length} problem(s): those files keep their last good version`);
}

const warningKey = (w: FileProblem) => `${w.file}\u0000${w.path}\u0000${w.message}`;

/** Each ignored-key warning once, when it first appears (not again on every reload). */
export function logNewWarnings(log: ReloadLogger, before: readonly FileProblem[], now: readonly FileProblem[]): void {
  const seen = new Set(before.map(warningKey));
  for (const w of now) {
    if (!seen.has(warningKey(w))) log.warn({ file: w.file, ...(w.line !== undefined ? { line: w.line } : {}), path: w.path }, w.message);
  }
}
