import { GatewayError, type ErrorDetail } from '../errors.js';
import { describeAjvError } from '../util/ajv.js';
import { nestsDeeperThan } from '../util/depth.js';
import type { CompiledTool } from '../tools/types.js';

/**
 * Stage: the arguments are an object nested at most `maxDepth` levels (checked first, without
 * recursion: everything after it may walk them) and match the tool's inputSchema (validator
 * compiled at load time). Every entry path (REST, batch entries, /mcp, /sse) comes through here.
 */
export function validateArguments(tool: CompiledTool, args: unknown, maxDepth: number): Record<string, unknown> {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    throw invalid(tool, [{ path: '/', message: 'arguments must be a JSON object' }]);
  }
  if (nestsDeeperThan(args, maxDepth)) {
    throw invalid(tool, [{ path: '/', message: `arguments nest deeper than ${maxDepth} levels of objects and arrays (limits.maxArgumentDepth)` }]);
  }
  if (!tool.validateArgs(args)) {
    const details = (tool.validateArgs.errors ?? []).map((e) => {
      const d = describeAjvError(e);
      return { path: d.path || '/', message: d.message };
    });
    throw invalid(tool, details);
  }
  return args as Record<string, unknown>;
}

function invalid(tool: CompiledTool, details: ErrorDetail[]): GatewayError {
  const list = details.slice(0, 5).map((d) => `${d.path} ${d.message}`).join('; ');
  return new GatewayError('INVALID_ARGUMENTS', `arguments for '${tool.name}' do not match its input schema`, {
    modelMessage: `The arguments for '${tool.name}' are invalid: ${list}. Fix them and call again.`,
    details,
  });
}
