import { GatewayError } from '../errors.js';
import { canSee, type Caller } from '../auth/caller.js';
import { closeNames } from '../tools/names.js';
import type { Registry } from '../tools/registry.js';
import type { CompiledTool } from '../tools/types.js';

/**
 * Stage: the tool the caller named, visible to it and (unless looking only) neither deprecated
 * nor held, for a caller with the `agent` role: only agents call tools (an approver's key sees
 * tools, to judge what it approves, but cannot run them). The role is checked first, so a key
 * without it learns nothing of the tool's names.
 */
export function resolveTool(registry: Registry, name: string, caller: Caller, opts: { lookOnly?: boolean } = {}): CompiledTool {
  if (!opts.lookOnly && !caller.roles.has('agent')) {
    throw new GatewayError('FORBIDDEN', `caller '${caller.id}' may not call tools: that needs the 'agent' role`, {
      modelMessage: 'This key may not call tools (it lacks the agent role). Do not retry; ask the user for an agent key.',
    });
  }
  const tool = registry.get(name);
  if (!tool) throw unknownTool(registry, name, caller);
  if (!canSee(caller, tool)) {
    throw new GatewayError('FORBIDDEN', `tool '${tool.name}' is not available to caller '${caller.id}'`, {
      modelMessage: `The tool '${tool.name}' is not available to you. Choose another tool.`,
    });
  }
  if (tool.deprecated && !opts.lookOnly) {
    const repl = tool.deprecated.replacement;
    throw new GatewayError('FORBIDDEN', `tool '${tool.name}' is deprecated${repl ? `; use '${repl}'` : ''}`, {
      modelMessage:
        tool.deprecated.message ??
        (repl ? `The tool '${tool.name}' is retired. Call '${repl}' instead.` : `The tool '${tool.name}' is retired. Choose another tool.`),
      details: repl ? [{ message: 'replacement', replacement: repl }] : [],
    });
  }
  const mcp = tool.mcp;
  if (mcp?.held && !opts.lookOnly) {
    throw new GatewayError('TOOL_CHANGED', `tool '${tool.name}' changed on MCP server '${mcp.server}' and is held until an admin accepts the change`, {
      details: [{ message: 'definition changed', server: mcp.server, oldHash: mcp.hash, newHash: mcp.held.newHash }],
    });
  }
  const op = tool.openapi;
  if (op?.held && !opts.lookOnly) {
    throw new GatewayError('TOOL_CHANGED', `tool '${tool.name}' changed in its OpenAPI document '${op.spec}' (${op.method} ${op.path}) and is held until an admin accepts the change`, {
      modelMessage: 'The tool changed in its API description and is held until an operator reviews the change. Use another tool or tell the user.',
      details: [{ message: 'definition changed', document: op.spec, operation: `${op.method} ${op.path}`, oldHash: op.hash, newHash: op.held.newHash }],
    });
  }
  return tool;
}

/** TOOL_NOT_FOUND for `name`, suggesting close names among the tools the caller can see. */
export function unknownTool(registry: Registry, name: string, caller: Caller): GatewayError {
  const visible = registry.tools.filter((t) => canSee(caller, t)).map((t) => t.name);
  const close = closeNames(name, visible);
  const hint = close.length > 0 ? ` Did you mean ${close.map((n) => `'${n}'`).join(' or ')}?` : '';
  return new GatewayError('TOOL_NOT_FOUND', `no tool named '${name}'`, {
    modelMessage: `There is no tool named '${name}'.${hint || ' Use one of the tools you were given.'}`,
    details: close.map((n) => ({ message: 'close name', suggestion: n })),
  });
}
