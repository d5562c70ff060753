import { GatewayError } from '../errors.js';
import { findingKinds } from '../tools/definition-findings.js';
import type { CompiledTool } from '../tools/types.js';

/**
 * The held error (TOOL_CHANGED) of a held MCP tool or OpenAPI operation, saying why: a changed definition, or findings
 * (their kinds and where, never the text) in a poisoned one: calls (src/pipeline/resolve.ts) and
 * GET /v1/tools/{name} answer it.
 */
export function heldError(tool: CompiledTool): GatewayError {
  const op = tool.openapi;
  if (op?.held) {
    const { held } = op;
    const operation = `${op.method} ${op.path}`;
    if (held.reason === 'poisoned') {
      return new GatewayError('TOOL_CHANGED', `tool '${tool.name}' of OpenAPI document '${op.spec}' (${operation}) is held until an admin accepts it: its definition has ${findingKinds(held.findings).join(' and ')} findings (tool poisoning)`, {
        modelMessage: 'The tool is held until an operator reviews its definition. Use another tool or tell the user.',
        details: [{ message: 'definition has findings', document: op.spec, operation, kinds: findingKinds(held.findings), oldHash: held.oldHash, newHash: held.newHash }],
      });
    }
    return new GatewayError('TOOL_CHANGED', `tool '${tool.name}' changed in its OpenAPI document '${op.spec}' (${operation}) and is held until an admin accepts the change`, {
      modelMessage: 'The tool changed in its API description and is held until an operator reviews the change. Use another tool or tell the user.',
      details: [{ message: 'definition changed', document: op.spec, operation, oldHash: op.hash, newHash: held.newHash }],
    });
  }
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
