import { GatewayError } from '../errors.js';
import { findingKinds } from '../tools/definition-findings.js';
import type { CompiledTool } from '../tools/types.js';

/**
 * The held error (TOOL_CHANGED) of a held MCP tool, saying why: a changed definition, or findings
 * (their kinds and where, never the text) in a poisoned one: calls (src/pipeline/resolve.ts) and
 * GET /v1/tools/{name} answer it.
 */
export function heldError(tool: CompiledTool): GatewayError {
  const mcp = tool.mcp;
  const held = mcp?.held;
  if (!mcp || !held) return new GatewayError('CONFLICT', `'${tool.name}' is not held`);
  const why = held.reason === 'poisoned'
    ? `its definition has ${findingKinds(held.findings).join(' and ')} findings (tool poisoning)`
    : 'its definition changed';
  return new GatewayError('TOOL_CHANGED', `tool '${tool.name}' of MCP server '${mcp.server}' is held until an admin accepts it: ${why}`, {
    details: [{ message: held.reason === 'poisoned' ? 'definition has findings' : 'definition changed', server: mcp.server, oldHash: held.oldHash, newHash: held.newHash }],
  });
}
