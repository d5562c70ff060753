import type { Static } from '@sinclair/typebox';
import { compileCheck } from './check.js';
import { GenericBatch, type GenericResult } from './schemas.js';
import type { Dialect } from './types.js';

const checkBody = compileCheck<Static<typeof GenericBatch>>(GenericBatch, 'generic');

/** toolgate's own form: `{ calls: [{ tool, arguments, id? }] }` → `{ results: [...] }` with the full result, confirmation or error of each. */
export const generic: Dialect = {
  name: 'generic',
  parse(body) {
    const b = checkBody(body);
    return { sessionId: b.sessionId, entries: b.calls.map((c) => ({ id: c.id, name: c.tool, args: c.arguments ?? {} })) };
  },
  format(entries, outcomes, ctx): { results: GenericResult[] } {
    return {
      results: entries.map((e, i): GenericResult => {
        const o = outcomes[i]!;
        const id = e.id !== undefined ? { id: e.id } : {};
        if (o.status === 'error') {
          const error = o.error.toBody().error;
          return { ...id, tool: ctx.registry.get(e.name)?.name ?? e.name, status: 'error', error: { ...error, details: [...error.details] } };
        }
        const base = { ...id, tool: o.response.tool, callId: o.response.callId };
        if (o.status === 'pending_confirmation') return { ...base, status: 'pending_confirmation', confirmation: o.response.confirmation };
        if (o.status === 'running') return { ...base, status: 'running' };
        const findings = o.response.policy.findings;
        return { ...base, status: 'ok', result: o.response.result, ...(findings ? { findings } : {}) };
      }),
    };
  },
};
