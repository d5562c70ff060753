import { formatProblem } from '../util/source.js';
import { skipReason } from '../tools/openapi/summary.js';
import type { CheckReport, IssuerSummary, ServerSummary, ToolSummary } from './types.js';

/** The human form of a report: problems first (file:line: path: message), then tools, then warnings. */

function gate(t: ToolSummary): string {
  return t.gated === true ? 'gated' : t.gated === false ? 'not gated' : `gated ${t.gated}`;
}

function table(rows: readonly string[][]): string[] {
  const widths = rows.reduce<number[]>((w, r) => r.map((c, i) => Math.max(w[i] ?? 0, c.length)), []);
  return rows.map((r) => '  ' + r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  '));
}

/** The `--connect` column: up with its revision and tools, or down (the error is listed above). */
function connected(s: ServerSummary): string[] {
  if (!s.connect) return [];
  return [s.connect.ok ? `up (${s.connect.protocolVersion ?? 'unknown revision'}, ${s.connect.tools} tools)` : 'DOWN'];
}

/** The `--connect` column of an issuer: its keys and their algorithms, or DOWN (the error is listed above). */
function issuerConnected(i: IssuerSummary): string[] {
  if (!i.connect) return [];
  if (!i.connect.ok) return ['DOWN'];
  const discovery = i.connect.discovery ? 'discovery ok (issuer matches), ' : '';
  return [`${discovery}${i.connect.keys} key(s), ${i.connect.usableKeys} usable (${i.connect.keyAlgorithms.join(', ')})`];
}

export function formatReport(r: CheckReport): string {
  const lines: string[] = [];
  lines.push(`config: ${r.config ?? '(embedded defaults)'}`, `tools dir: ${r.toolsDir ?? '(not checked: the config has errors)'}`);
  if (r.errors.length > 0) lines.push('', `errors (${r.errors.length}):`, ...r.errors.map(formatProblem));
  // The operations of OpenAPI documents are listed under their document, below.
  const fromDocuments = new Set(r.openapi.flatMap((o) => o.operations.map((op) => op.tool)));
  const own = r.tools.filter((t) => !fromDocuments.has(t.name));
  lines.push('', `tools (${r.tools.length}${fromDocuments.size > 0 ? `; ${fromDocuments.size} from OpenAPI documents, listed with them` : ''}):`);
  const rows = own.map((t) => [
    t.name,
    t.backends.map((b) => `${b.id}(${b.kind})`).join(', '),
    t.sideEffect,
    gate(t),
    `visibility: ${t.roles === null ? 'all roles' : t.roles.join(', ')}${t.prefilter ? '' : ' (no prefilter)'}`,
    `timeout ${t.timeoutMs} ms`,
    t.file,
  ]);
  lines.push(...(rows.length > 0 ? table(rows) : ['  (none)']));
  if (r.mcpServers.length > 0) {
    lines.push('', `MCP servers (${r.mcpServers.length}; their tools are imported when the gateway connects):`);
    lines.push(...table(r.mcpServers.map((s) => [s.name, s.transport, `include: ${s.include === null ? '(all)' : s.include.join(', ')}`, ...connected(s), s.file])));
  }
  for (const o of r.openapi) {
    lines.push('', `OpenAPI document ${o.name} (${o.version}, ${o.source}; ${o.operations.length} operation(s), ${o.skipped.length} skipped) from ${o.file}:`);
    const ops = o.operations.map((op) => [op.tool, op.method, op.path, op.sideEffect, ...(op.held ? [op.heldReason === 'poisoned' ? `HELD (definition with ${[...new Set((op.findings ?? []).map((f) => f.kind))].join(' and ')} findings; an admin accepts it)` : 'HELD (changed; an admin accepts it)'] : [])]);
    lines.push(...(ops.length > 0 ? table(ops) : ['  (no operation)']));
    for (const s of o.skipped) lines.push(`  skipped ${s.operation || '(document)'}: ${skipReason(s)} [${formatProblem({ file: s.file, ...(s.line !== undefined ? { line: s.line } : {}), path: s.path, message: '' }).replace(/: $/, '')}]`);
  }
  if (r.clientConfigs.length > 0) {
    lines.push('', `MCP client config names (${r.clientConfigs.length}; as written → as served):`);
    lines.push(...table(r.clientConfigs.map((n) => [n.from, '→', n.skipped ? `(skipped: ${n.skipped})` : (n.to ?? '(unusable)'), n.file])));
  }
  if (r.issuers.length > 0) {
    lines.push('', `issuers (${r.issuers.length}):`);
    lines.push(...table(r.issuers.map((i) => [
      i.issuer,
      `audience: ${i.audience.join(', ')}`,
      `algorithms: ${i.algorithms.join(', ')}`,
      i.jwksUri === null ? 'keys from discovery' : `jwksUri: ${i.jwksUri}`,
      ...(i.introspection ? ['introspection'] : []),
      ...issuerConnected(i),
    ])));
  }
  if (r.warnings.length > 0) {
    lines.push('', `warnings (${r.warnings.length}):`, ...r.warnings.map((w) => `warning: ${formatProblem(w)} [${w.rule}]`));
  }
  const verdict = r.ok ? 'OK' : 'FAILED';
  lines.push('', `${verdict}: ${r.errors.length} error(s), ${r.warnings.length} warning(s), ${r.tools.length} tool(s)`);
  return lines.join('\n') + '\n';
}
