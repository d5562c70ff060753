import { Type, type Static } from '@sinclair/typebox';
import type { Tool } from '@modelcontextprotocol/server';
import { GatewayError, type ErrorDetail } from '../errors.js';
import { createAjv, describeAjvError } from '../util/ajv.js';

/** The gateway's own tool in the tool-search mode. */
export const FIND_TOOLS = 'find_tools';

/** A query is a sentence about a task, not a document: longer ones are refused, not cut. */
export const MAX_QUERY_CHARS = 2000;
/** The most a search may return (mcp.toolSearch.k's own maximum); a caller's k caps it further. */
const MAX_K = 50;

const Args = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: MAX_QUERY_CHARS, description: 'what you want to do, in a few words or a sentence (any language), e.g. "convert a PDF to text"' }),
    k: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_K, description: 'how many tools to return at most' })),
  },
  { additionalProperties: false },
);
type Args = Static<typeof Args>;

const validate = createAjv().compile<Args>(Args);
/** The schema as plain JSON (TypeBox marks its objects with symbols). */
const ARGS_JSON = JSON.parse(JSON.stringify(Args)) as { properties: Tool['inputSchema']['properties'] };

/**
 * C0 and C1 control characters (tab, line feed and carriage return aside), unpaired surrogates,
 * the replacement character (what undecodable bytes became) and the two noncharacters U+FFFE/FFFF:
 * what binary data pasted as a query looks like.
 */
const BINARY = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\uFFFD\uFFFE\uFFFF]|\p{Cs}/u;

/** find_tools's arguments, or the INVALID_ARGUMENTS error the model reads (a tool error, as the MCP spec asks for input validation). */
export function parseSearch(args: Record<string, unknown>, kMax: number): { query: string; k: number } | GatewayError {
  const invalid = (details: ErrorDetail[]) => new GatewayError('INVALID_ARGUMENTS', 'find_tools arguments are invalid', { details });
  if (!validate(args)) return invalid((validate.errors ?? []).map(describeAjvError));
  if (BINARY.test(args.query)) return invalid([{ path: '/query', message: 'must be text: it contains control characters or binary data' }]);
  if (args.query.trim() === '') return invalid([{ path: '/query', message: 'must say what you want to do (it is blank)' }]);
  return { query: args.query.trim(), k: Math.min(args.k ?? kMax, kMax) };
}

/** find_tools as tools/list shows it: in a session the candidates join the list; without one the result carries their schemas. */
export function findToolsTool(k: number, inSession: boolean): Tool {
  const then = inSession
    ? `The tools found (at most ${k}) are added to your tool list with their input schemas, replacing those of the previous search; then call them.`
    : `Its result lists the tools found (at most ${k}) with their input schemas; then call them by name.`;
  return {
    name: FIND_TOOLS,
    title: 'Find tools',
    description:
      `Search the gateway's tools by what you want to do; then call the tools it lists. Use it when none of the tools you have fits the task: ` +
      `describe the task in plain words (e.g. "current weather in a city", "open a pull request"), not a guessed tool name. ${then}`,
    inputSchema: { type: 'object', properties: ARGS_JSON.properties, required: ['query'], additionalProperties: false },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  };
}
