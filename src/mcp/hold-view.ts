import type { DefinitionFinding } from '../tools/definition-findings.js';
import type { CompiledTool } from '../tools/types.js';

/** At most this many findings of one definition go into a record or the admin view (a schema of 50,000 poisoned properties must not make a 50,000-entry record). */
export const MAX_DEFINITION_FINDINGS = 64;

/** How many findings auditFindings() left out (`findingsOmitted` beside them). */
export function omittedFindings(findings: readonly DefinitionFinding[]): number {
  return Math.max(0, findings.length - MAX_DEFINITION_FINDINGS);
}

/**
 * Definition findings as audit records and GET /admin/mcp carry them: the shape of a call's
 * `findings` (kind, action, count, offsets), the action `hold`, plus where in the definition.
 */
export function auditFindings(findings: readonly DefinitionFinding[]) {
  return findings.slice(0, MAX_DEFINITION_FINDINGS).map((f) => ({
    kind: f.kind, action: 'hold' as const, count: f.count, offsets: f.offsets.map(([a, b]) => [a, b]), field: f.field, path: f.path, ...(f.key ? { key: true } : {}),
  }));
}

/** One held tool in GET /admin/mcp: why, and the held definition itself (the server's own text, for the admin to review). */
export function holdView(t: CompiledTool) {
  const mcp = t.mcp;
  const held = mcp?.held;
  if (!mcp || !held) return undefined;
  return {
    tool: t.name,
    mcpTool: mcp.tool,
    reason: held.reason,
    listed: held.oldHash !== null,
    oldHash: held.oldHash,
    newHash: held.newHash,
    findings: auditFindings(held.findings),
    findingsOmitted: omittedFindings(held.findings),
    definition: held.definition as unknown as Record<string, unknown>,
  };
}
