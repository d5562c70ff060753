import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { readClientConfig, SERVER_BLOCKS } from '../tools/client-config.js';
import { parseSource, type ParsedSource } from '../util/source.js';
import type { CheckWarning, ClientConfigName } from './types.js';

/**
 * What `check` says of MCP client config files: the keys ignored (as warnings at their line) and
 * each server's name as written and as served. Read from the files as written: neither names nor
 * keys depend on `${env:}` values. Problems are the loader's, reported with the errors.
 */
export function clientConfigNotes(raws: ReadonlyMap<string, ParsedSource | undefined>): { warnings: CheckWarning[]; names: ClientConfigName[] } {
  const warnings: CheckWarning[] = [];
  const names: ClientConfigName[] = [];
  for (const [at, written] of raws) {
    const [file, raw] = referenced(at, written);
    const v = raw?.value;
    if (v === null || typeof v !== 'object' || Array.isArray(v) || 'kind' in v || !SERVER_BLOCKS.some((b) => b in v)) continue;
    const read = readClientConfig(file, v as Record<string, unknown>);
    if (read.problems.length > 0) continue;
    for (const w of read.warnings) {
      const line = raw?.lineOf(w.path);
      warnings.push(line === undefined ? { file, path: w.path, message: w.message, rule: 'client-config' } : { file, line, path: w.path, message: w.message, rule: 'client-config' });
    }
    for (const n of read.names) names.push({ file, from: n.from, to: n.to, ...(n.skipped ? { skipped: n.skipped } : {}) });
  }
  return { warnings, names };
}

/** A `kind: mcp-client-config` file stands for the file it names (read as written; the loader reports what is wrong with it). */
function referenced(file: string, raw: ParsedSource | undefined): [string, ParsedSource | undefined] {
  const v = raw?.value as { kind?: unknown; file?: unknown } | null | undefined;
  if (v?.kind !== 'mcp-client-config' || typeof v.file !== 'string') return [file, raw];
  const target = isAbsolute(v.file) ? v.file : join(dirname(file), v.file);
  try {
    return [target, parseSource(readFileSync(target, 'utf8'), target)];
  } catch {
    return [target, undefined];
  }
}
