import { Type, type Static } from '@sinclair/typebox';
import { ErrorBody } from '../routes/schemas.js';

/**
 * The four batch dialects of POST /v1/calls, in and out. Inputs are loose (a provider's message
 * carries fields we do not use); only what we read is required. The generic form is ours: strict.
 */

const Loose = { additionalProperties: true } as const;
const SessionId = Type.String({ minLength: 1, maxLength: 256, description: 'loop detection and audit correlation, as for single calls' });
/** Providers send arguments as a JSON string (maybe malformed: that entry fails alone); an object is accepted too. */
const ArgumentsText = Type.Union([Type.String(), Type.Object({}, Loose)]);

export const OpenAIToolCall = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    type: Type.Optional(Type.Literal('function')),
    function: Type.Object({ name: Type.String({ minLength: 1 }), arguments: Type.Optional(ArgumentsText) }, Loose),
  },
  Loose,
);
export const OpenAIBatch = Type.Object(
  { tool_calls: Type.Array(OpenAIToolCall), sessionId: Type.Optional(SessionId) },
  { ...Loose, title: 'OpenAI Chat Completions', description: '`tool_calls`, alone or as the whole assistant message' },
);

export const ResponsesFunctionCall = Type.Object(
  { type: Type.Literal('function_call'), call_id: Type.String({ minLength: 1 }), name: Type.String({ minLength: 1 }), arguments: Type.Optional(ArgumentsText) },
  Loose,
);
const ResponsesItem = Type.Object({ type: Type.String(), call_id: Type.Optional(Type.String()) }, Loose);
export const ResponsesItems = Type.Array(ResponsesItem, { title: 'OpenAI Responses items', description: 'items of type function_call run; others are skipped' });
export const ResponsesBatch = Type.Object(
  { output: Type.Optional(ResponsesItems), input: Type.Optional(ResponsesItems), sessionId: Type.Optional(SessionId) },
  { ...Loose, title: 'OpenAI Responses', description: '`output` (a response) or `input` items; a function_call whose output is already in the list is skipped' },
);

export const AnthropicToolUse = Type.Object(
  { type: Type.Literal('tool_use'), id: Type.String({ minLength: 1 }), name: Type.String({ minLength: 1 }), input: Type.Optional(Type.Object({}, Loose)) },
  Loose,
);
export const AnthropicBatch = Type.Object(
  { content: Type.Array(Type.Object({ type: Type.String() }, Loose)), sessionId: Type.Optional(SessionId) },
  { ...Loose, title: 'Anthropic Messages', description: 'assistant content blocks; tool_use blocks run, others are skipped' },
);

export const GenericCall = Type.Object(
  {
    tool: Type.String({ minLength: 1, maxLength: 256 }),
    arguments: Type.Optional(Type.Object({}, Loose)),
    id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  },
  { additionalProperties: false },
);
export const GenericBatch = Type.Object(
  { calls: Type.Array(GenericCall), sessionId: Type.Optional(SessionId) },
  { additionalProperties: false, title: 'generic' },
);

export const BatchBody = Type.Union([OpenAIBatch, Type.Array(OpenAIToolCall), ResponsesBatch, AnthropicBatch, GenericBatch], {
  description: 'A batch in the client\'s own format (a Responses item list may also be sent as a bare array)',
});

// ---- answers ----

export const OpenAIAnswer = Type.Object(
  {
    messages: Type.Array(
      Type.Object({ role: Type.Literal('tool'), tool_call_id: Type.String(), content: Type.String() }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false, title: 'OpenAI Chat Completions answer' },
);
export const ResponsesAnswer = Type.Object(
  {
    output: Type.Array(
      Type.Object({ type: Type.Literal('function_call_output'), call_id: Type.String(), output: Type.String() }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false, title: 'OpenAI Responses answer' },
);
export const AnthropicAnswer = Type.Object(
  {
    role: Type.Literal('user'),
    content: Type.Array(
      Type.Object(
        { type: Type.Literal('tool_result'), tool_use_id: Type.String(), content: Type.String(), is_error: Type.Boolean() },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, title: 'Anthropic answer' },
);
export const GenericResult = Type.Object(
  {
    id: Type.Optional(Type.String()),
    tool: Type.String({ description: 'canonical name' }),
    status: Type.Union([Type.Literal('ok'), Type.Literal('pending_confirmation'), Type.Literal('running'), Type.Literal('error')]),
    callId: Type.Optional(Type.String()),
    result: Type.Optional(Type.Ref('ToolResult')),
    confirmation: Type.Optional(Type.Object({ id: Type.String(), expiresAt: Type.String(), summary: Type.String() })),
    error: Type.Optional(ErrorBody.properties.error),
    findings: Type.Optional(
      Type.Array(
        Type.Object({ kind: Type.String(), action: Type.String(), count: Type.Integer(), note: Type.Optional(Type.String()) }, { additionalProperties: false }),
        { description: "result-guard findings whose action is flag (the call's policy.findings)" },
      ),
    ),
  },
  { additionalProperties: false },
);
export const GenericAnswer = Type.Object({ results: Type.Array(GenericResult) }, { additionalProperties: false, title: 'generic answer' });

export type OpenAIAnswer = Static<typeof OpenAIAnswer>;
export type ResponsesAnswer = Static<typeof ResponsesAnswer>;
export type AnthropicAnswer = Static<typeof AnthropicAnswer>;
export type GenericResult = Static<typeof GenericResult>;
