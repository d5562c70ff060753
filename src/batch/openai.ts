import { Type, type Static } from '@sinclair/typebox';
import { readArguments } from './arguments.js';
import { compileCheck } from './check.js';
import { modelText } from './content.js';
import { OpenAIBatch, OpenAIToolCall, type OpenAIAnswer } from './schemas.js';
import type { Dialect } from './types.js';

type ToolCall = Static<typeof OpenAIToolCall>;
const checkBody = compileCheck<Static<typeof OpenAIBatch>>(OpenAIBatch, 'OpenAI Chat Completions');
const checkList = compileCheck<ToolCall[]>(Type.Array(OpenAIToolCall), 'OpenAI Chat Completions');

/** OpenAI Chat Completions: `tool_calls` (alone, as a bare array, or the whole assistant message) → `role: tool` messages. */
export const openai: Dialect = {
  name: 'openai',
  parse(body) {
    let calls: ToolCall[];
    let sessionId: string | undefined;
    if (Array.isArray(body)) calls = checkList(body);
    else ({ tool_calls: calls, sessionId } = checkBody(body));
    return {
      sessionId,
      entries: calls.map((c) => ({ id: c.id, name: c.function.name, ...readArguments(c.function.arguments, c.function.name) })),
    };
  },
  format(entries, outcomes, ctx): OpenAIAnswer {
    return {
      messages: entries.map((e, i) => ({
        role: 'tool' as const,
        tool_call_id: e.id ?? '',
        content: modelText(e, outcomes[i]!, ctx, 'provider').text,
      })),
    };
  },
};
