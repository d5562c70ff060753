import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { AuditRecord } from './types.js';

export interface AuditFilter {
  tool?: string | undefined;
  caller?: string | undefined;
  /** A token caller's subject (any issuer's, unless `issuer` narrows it). */
  subject?: string | undefined;
  issuer?: string | undefined;
  outcome?: string | undefined;
  event?: string | undefined;
  /** true: records with at least one finding (`findings: [...]`); false: records with none. */
  findings?: boolean | undefined;
  /** ISO times, inclusive. */
  since?: string | undefined;
  until?: string | undefined;
  limit: number;
  /** The id of the last record of the previous page. */
  cursor?: string | undefined;
}

export interface AuditPage {
  records: AuditRecord[];
  nextCursor: string | null;
}

function hasFindings(r: AuditRecord): boolean {
  return Array.isArray(r.findings) && r.findings.length > 0;
}

export function matches(r: AuditRecord, f: AuditFilter): boolean {
  if (f.tool !== undefined && r.tool !== f.tool) return false;
  if (f.caller !== undefined && r.caller !== f.caller) return false;
  if (f.subject !== undefined && r.subject !== f.subject) return false;
  if (f.issuer !== undefined && r.issuer !== f.issuer) return false;
  if (f.outcome !== undefined && r.outcome !== f.outcome) return false;
  if (f.event !== undefined && (r.event ?? 'call') !== f.event) return false;
  if (f.findings !== undefined && hasFindings(r) !== f.findings) return false;
  if (f.since !== undefined && r.ts < f.since) return false;
  if (f.until !== undefined && r.ts > f.until) return false;
  return true;
}

/**
 * Newest first, across the current file and its rotated predecessors, read newest to oldest and
 * stopping once the page is full. A line that does not parse (a torn write) is skipped.
 */
export async function queryFiles(filesOldestFirst: readonly string[], f: AuditFilter): Promise<AuditPage> {
  const out: AuditRecord[] = [];
  let passedCursor = f.cursor === undefined;
  for (const file of [...filesOldestFirst].reverse()) {
    if (!existsSync(file)) continue;
    const lines = (await readFile(file, 'utf8')).split('\n');
    for (let i = lines.length - 1; i >= 0; i--) {
      const line = lines[i];
      if (!line) continue;
      let r: AuditRecord;
      try {
        r = JSON.parse(line) as AuditRecord;
      } catch {
        continue;
      }
      if (!passedCursor) {
        passedCursor = r.id === f.cursor;
        continue;
      }
      if (!matches(r, f)) continue;
      if (out.length === f.limit) return { records: out, nextCursor: out[out.length - 1]?.id ?? null };
      out.push(r);
    }
  }
  return { records: out, nextCursor: null };
}
