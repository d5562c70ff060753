import type { CompiledTool } from './types.js';

/** A tool as each kind of client wants it listed. */
export type ToolFormat = 'toolgate' | 'openai' | 'anthropic' | 'mcp';

function deprecationNotice(t: CompiledTool): string {
  if (!t.deprecated) return '';
  const repl = t.deprecated.replacement ? ` Use ${t.deprecated.replacement} instead.` : '';
  return ` [Deprecated: calls are refused.${repl}]`;
}

/** A held MCP tool is listed with the definition last accepted, and says why calls are refused. */
function heldNotice(t: CompiledTool): string {
  const held = t.mcp?.held;
  if (held) {
    return held.reason === 'poisoned'
      ? ' [Held: its MCP server offers a definition of this tool that failed the gateway\'s checks; calls are refused until an operator reviews it.]'
      : ' [Held: its MCP server changed this tool; calls are refused until an operator reviews the change.]';
  }
  const op = t.openapi?.held;
  if (!op) return '';
  return op.reason === 'poisoned'
    ? ' [Held: its OpenAPI document describes this operation in a way that failed the gateway\'s checks; calls are refused until an operator reviews it.]'
    : ' [Held: its OpenAPI document changed this operation; calls are refused until an operator reviews the change.]';
}

function described(t: CompiledTool): string {
  return t.description + deprecationNotice(t) + heldNotice(t);
}

export function toToolgate(t: CompiledTool) {
  return {
    name: t.name,
    providerName: t.providerName,
    ...(t.title !== undefined ? { title: t.title } : {}),
    description: described(t),
    tags: t.tags,
    inputSchema: t.inputSchema,
    ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}),
    sideEffect: t.sideEffect,
    idempotent: t.idempotent,
    confirm: typeof t.confirm === 'boolean' ? t.confirm : `when ${t.confirm.describe}`,
    timeoutMs: t.timeoutMs,
    deprecated: t.deprecated !== undefined,
    ...(t.deprecated?.replacement ? { replacement: t.deprecated.replacement } : {}),
    ...(t.mcp ? { mcp: { server: t.mcp.server, tool: t.mcp.tool, hash: t.mcp.hash, ...(t.mcp.held ? { held: true, heldReason: t.mcp.held.reason, newHash: t.mcp.held.newHash } : {}) } } : {}),
    ...(t.openapi ? { openapi: { spec: t.openapi.spec, ...(t.openapi.operationId !== undefined ? { operationId: t.openapi.operationId } : {}), method: t.openapi.method, path: t.openapi.path, hash: t.openapi.hash, ...(t.openapi.held ? { held: true, heldReason: t.openapi.held.reason, newHash: t.openapi.held.newHash } : {}) } } : {}),
  };
}

/** OpenAI Chat Completions `tools` entry; the name obeys ^[a-zA-Z0-9_-]{1,64}$. */
export function toOpenAI(t: CompiledTool) {
  return { type: 'function' as const, function: { name: t.providerName, description: described(t), parameters: t.inputSchema } };
}

/** Anthropic Messages `tools` entry; the name obeys ^[a-zA-Z0-9_-]{1,64}$. */
export function toAnthropic(t: CompiledTool) {
  return { name: t.providerName, description: described(t), input_schema: t.inputSchema };
}

/** MCP `tools/list` entry, with annotations derived from sideEffect and idempotent. */
export function toMcp(t: CompiledTool) {
  const readOnly = t.sideEffect === 'none' || t.sideEffect === 'read';
  return {
    name: t.name,
    ...(t.title !== undefined ? { title: t.title } : {}),
    description: described(t),
    inputSchema: t.inputSchema,
    ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}),
    annotations: {
      ...(t.title !== undefined ? { title: t.title } : {}),
      readOnlyHint: readOnly,
      destructiveHint: t.sideEffect === 'destructive',
      idempotentHint: t.idempotent,
      openWorldHint: t.sideEffect === 'external',
    },
  };
}

export function formatTool(t: CompiledTool, format: ToolFormat) {
  switch (format) {
    case 'openai':
      return toOpenAI(t);
    case 'anthropic':
      return toAnthropic(t);
    case 'mcp':
      return toMcp(t);
    default:
      return toToolgate(t);
  }
}
