import type { Static } from '@sinclair/typebox';
import { readArguments } from './arguments.js';
import { compileCheck } from './check.js';
import { modelText } from './content.js';
import { ResponsesBatch, ResponsesFunctionCall, ResponsesItems, type ResponsesAnswer } from './schemas.js';
import type { BatchEntry, Dialect } from './types.js';

type Item = Static<typeof ResponsesItems>[number];
const checkBody = compileCheck<Static<typeof ResponsesBatch>>(ResponsesBatch, 'OpenAI Responses');
const checkItems = compileCheck<Item[]>(ResponsesItems, 'OpenAI Responses');
const checkCall = compileCheck<Static<typeof ResponsesFunctionCall>>(ResponsesFunctionCall, 'OpenAI Responses');

/**
 * OpenAI Responses: `function_call` items (a response's `output`, a request's `input`, or a bare
 * item list) → `function_call_output` items. A call whose output is already in the list was run
 * before: it is skipped, so sending a whole conversation does not run old calls again.
 */
export const responses: Dialect = {
  name: 'responses',
  parse(body) {
    let items: Item[];
    let at: string;
    let sessionId: string | undefined;
    if (Array.isArray(body)) {
      items = checkItems(body);
      at = '';
    } else {
      const b = checkBody(body);
      at = b.output ? '/output' : '/input';
      items = b.output ?? b.input ?? [];
      sessionId = b.sessionId;
    }
    const answered = new Set(items.filter((it) => it.type === 'function_call_output').map((it) => it.call_id));
    const entries: BatchEntry[] = [];
    items.forEach((it, i) => {
      if (it.type !== 'function_call') return;
      const c = checkCall(it, `${at}/${i}`);
      if (answered.has(c.call_id)) return;
      entries.push({ id: c.call_id, name: c.name, ...readArguments(c.arguments, c.name) });
    });
    return { entries, sessionId };
  },
  format(entries, outcomes, ctx): ResponsesAnswer {
    return {
      output: entries.map((e, i) => ({
        type: 'function_call_output' as const,
        call_id: e.id ?? '',
        output: modelText(e, outcomes[i]!, ctx, 'provider').text,
      })),
    };
  },
};
