import type { Static } from '@sinclair/typebox';
import { compileCheck } from './check.js';
import { modelText } from './content.js';
import { AnthropicBatch, AnthropicToolUse, type AnthropicAnswer } from './schemas.js';
import type { BatchEntry, Dialect } from './types.js';

const checkBody = compileCheck<Static<typeof AnthropicBatch>>(AnthropicBatch, 'Anthropic Messages');
const checkUse = compileCheck<Static<typeof AnthropicToolUse>>(AnthropicToolUse, 'Anthropic Messages');

/** Anthropic Messages: `tool_use` blocks of assistant content (other blocks skipped) → one user message of `tool_result` blocks. */
export const anthropic: Dialect = {
  name: 'anthropic',
  parse(body) {
    const b = checkBody(body);
    const entries: BatchEntry[] = [];
    b.content.forEach((block, i) => {
      if (block.type !== 'tool_use') return;
      const u = checkUse(block, `/content/${i}`);
      entries.push({ id: u.id, name: u.name, args: u.input ?? {} });
    });
    return { entries, sessionId: b.sessionId };
  },
  format(entries, outcomes, ctx): AnthropicAnswer {
    return {
      role: 'user',
      content: entries.map((e, i) => {
        const t = modelText(e, outcomes[i]!, ctx, 'provider');
        return { type: 'tool_result' as const, tool_use_id: e.id ?? '', content: t.text, is_error: t.isError };
      }),
    };
  },
};
