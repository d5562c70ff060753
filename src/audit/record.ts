import { newId } from '../util/ids.js';
import { digest } from '../util/hash.js';
import type { CompiledTool } from '../tools/types.js';
import { parseRedactPaths, redact, type RedactPath } from './redact.js';
import type { AuditRecord } from './types.js';

const pathCache = new WeakMap<CompiledTool, RedactPath[]>();

/** The tool's `redact` paths, parsed once per compiled tool. */
function redactPathsOf(tool: CompiledTool): RedactPath[] {
  let paths = pathCache.get(tool);
  if (!paths) {
    paths = parseRedactPaths(tool.redact);
    pathCache.set(tool, paths);
  }
  return paths;
}

/** Arguments as they may be written down: the tool's redact paths and every secret masked. */
export function redactArgs(tool: CompiledTool | undefined, args: unknown, secrets: ReadonlySet<string>): unknown {
  return redact(args, tool ? redactPathsOf(tool) : [], secrets);
}

export function auditRecord(fields: Omit<AuditRecord, 'id' | 'ts'>): AuditRecord {
  return { id: newId('a'), ts: new Date().toISOString(), ...fields };
}

export { digest as argsDigest };
