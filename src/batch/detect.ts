import { GatewayError } from '../errors.js';
import { anthropic } from './anthropic.js';
import { generic } from './generic.js';
import { openai } from './openai.js';
import { responses } from './responses.js';
import type { Dialect, ParsedBatch } from './types.js';

const EXPECTED =
  'expected OpenAI { tool_calls: [...] }, OpenAI Responses { output: [...] } or a list of function_call items, ' +
  'Anthropic { content: [{ type: "tool_use", ... }] } or { calls: [{ tool, arguments }] }';

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Which dialect a body speaks, from the key only that dialect has; the dialect's schema then
 * checks the rest. A bare array is OpenAI tool calls when its items carry `function`, else Responses items.
 */
function dialectOf(body: unknown): Dialect | undefined {
  if (Array.isArray(body)) return body.length > 0 && body.every((c) => isObject(c) && 'function' in c) ? openai : responses;
  if (!isObject(body)) return undefined;
  if ('calls' in body) return generic;
  if ('tool_calls' in body) return openai;
  if (Array.isArray(body['output']) || Array.isArray(body['input'])) return responses;
  if (Array.isArray(body['content'])) return anthropic;
  return undefined;
}

/** Reads a batch body: its dialect, its entries in request order, its sessionId. 400 when it is none of them, or holds no call. */
export function parseBatch(body: unknown, maxCalls: number): ParsedBatch {
  const dialect = dialectOf(body);
  if (!dialect) {
    throw new GatewayError('BAD_REQUEST', `unrecognised batch: ${EXPECTED}`, {
      modelMessage: 'The body is not a batch of tool calls in a known format. Send the tool calls as the model emitted them.',
    });
  }
  const { entries, sessionId } = dialect.parse(body);
  if (entries.length === 0) {
    throw new GatewayError('BAD_REQUEST', `the ${dialect.name} batch holds no tool call to run`, {
      modelMessage: 'The batch holds no tool call. Send at least one.',
    });
  }
  if (entries.length > maxCalls) {
    throw new GatewayError('PAYLOAD_TOO_LARGE', `the batch holds ${entries.length} calls; at most ${maxCalls} are allowed`, {
      modelMessage: `Too many tool calls at once (at most ${maxCalls}). Send them in smaller batches.`,
    });
  }
  return { dialect, entries, sessionId };
}
