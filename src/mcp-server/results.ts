import type { CallToolResult } from '@modelcontextprotocol/server';
import type { ToolResult } from '../adapters/types.js';
import { errorText } from '../batch/content.js';
import { GatewayError, isGatewayError } from '../errors.js';
import type { PendingResponse } from '../pipeline/index.js';
import type { PolicyTrail } from '../pipeline/execute.js';
import type { Registry } from '../tools/registry.js';
import type { Caller } from '../auth/caller.js';
import { unknownTool } from '../pipeline/resolve.js';
import { hiddenFrom, type McpNames } from './names.js';

/** What a result the gateway writes needs: the tools, the caller's view of them, the names /mcp lists. */
export interface ResultContext {
  registry: Registry;
  caller: Caller;
  names: McpNames;
}

const asIs = (n: string) => n;

/**
 * A pipeline result as MCP's CallToolResult (content blocks are MCP-shaped already: adapters produce
 * them). Result-guard flags (the REST response's `policy.findings`) ride in `_meta`.
 */
export function toolResult(r: ToolResult, findings?: PolicyTrail['findings']): CallToolResult {
  return {
    content: r.content as CallToolResult['content'],
    ...(r.structuredContent ? { structuredContent: r.structuredContent } : {}),
    isError: r.isError,
    ...(findings && findings.length > 0 ? { _meta: { 'toolgate/findings': findings } } : {}),
  };
}

function text(t: string, isError: boolean): CallToolResult {
  return { content: [{ type: 'text', text: t }], isError };
}

/** A failed call is a tool result the model can read (isError), not a protocol error: the model may repair it. */
export function errorResult(e: unknown, r: ResultContext, name: string): CallToolResult {
  let err = isGatewayError(e) ? e : new GatewayError('INTERNAL', 'the call failed inside the gateway', { cause: e });
  // A tool the caller cannot see is not listed to it: its name answers as an unknown one would.
  if (err.code === 'FORBIDDEN' && hiddenFrom(r.registry, r.caller, name)) err = unknownTool(r.registry, name, r.caller);
  const written = errorText(err, { registry: r.registry }, r.names.naming, name);
  // Not-found texts name what was called and suggest listed names already (errorText).
  return text(err.code === 'TOOL_NOT_FOUND' ? written : r.names.text(written), true);
}

/** A gated call is not an error: it is waiting for a person, and the model should say so rather than retry. */
export function pendingResult(p: PendingResponse, show: (canonical: string) => string = asIs): CallToolResult {
  return {
    ...text(
      `Not run yet: this call of '${show(p.tool)}' needs a person's approval (confirmation ${p.confirmation.id}, call ${p.callId}, ` +
        `expires ${p.confirmation.expiresAt}). Do not call it again; tell the user it is waiting for approval.`,
      false,
    ),
    _meta: { 'toolgate/confirmation': { id: p.confirmation.id, callId: p.callId, expiresAt: p.confirmation.expiresAt } },
  };
}

export function declinedResult(p: { tool: string; confirmationId: string }): CallToolResult {
  return text(`The user declined this call of '${p.tool}' (confirmation ${p.confirmationId}); it was not run. Do not retry it unless the user asks.`, true);
}
