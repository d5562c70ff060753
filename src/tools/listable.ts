import { canSee, type Caller } from '../auth/caller.js';
import type { CompiledTool } from './types.js';

/**
 * A tool held with no accepted definition (an MCP tool or OpenAPI operation whose first definition has findings: tool
 * poisoning) has nothing safe to show a model: it is in the registry, so that a call answers the
 * held error and an admin can accept it, but no list shows it (GET /v1/tools, `tools/list` on /mcp,
 * the prefilter, tool search).
 */
export function unlisted(t: CompiledTool): boolean {
  return (t.mcp?.held !== undefined && t.mcp.held.oldHash === null) || (t.openapi?.held !== undefined && t.openapi.held.oldHash === null);
}

/** The caller may see the tool and it may be listed. */
export function listable(caller: Caller, t: CompiledTool): boolean {
  return canSee(caller, t) && !unlisted(t);
}
