import type { ToolResult } from '../adapters/types.js';
import type { GatewayError } from '../errors.js';
import type { AcceptedResponse, PendingResponse } from '../pipeline/index.js';
import type { BatchEntry, EntryOutcome, FormatContext } from './types.js';

/** Which names the model was given: canonical (generic) or provider (module__action) ones. */
export type Naming = 'canonical' | 'provider';

export interface ModelText {
  text: string;
  isError: boolean;
}

/** The text a model reads for one entry: the result, the error's modelMessage, or a note that approval is pending. */
export function modelText(entry: BatchEntry, outcome: EntryOutcome, ctx: FormatContext, naming: Naming): ModelText {
  switch (outcome.status) {
    case 'ok':
      return { text: resultText(outcome.response.result), isError: outcome.response.result.isError };
    case 'pending_confirmation':
      return { text: pendingText(entry.name, outcome.response), isError: false };
    case 'running':
      return { text: runningText(entry.name, outcome.response), isError: false };
    case 'error':
      return { text: errorText(outcome.error, ctx, naming, entry.name), isError: true };
  }
}

/** Text blocks as they are; other blocks named (a tool message is text); structured content as JSON when there is no text. */
export function resultText(result: ToolResult): string {
  const parts = result.content.map((b) => {
    if (b.type === 'text' && typeof b['text'] === 'string') return b['text'];
    const mime = typeof b['mimeType'] === 'string' ? ` (${b['mimeType']})` : '';
    return `[${b.type} content${mime} not shown]`;
  });
  if (parts.length === 0 && result.structuredContent) return JSON.stringify(result.structuredContent);
  return parts.length === 0 ? '(no output)' : parts.join('\n');
}

export function pendingText(name: string, p: PendingResponse): string {
  return (
    `Not run yet: this call of '${name}' needs a person's approval (confirmation ${p.confirmation.id}, call ${p.callId}, ` +
    `expires ${p.confirmation.expiresAt}). Do not call it again; tell the user it is waiting for approval.`
  );
}

export function runningText(name: string, p: AcceptedResponse): string {
  return `Started: this call of '${name}' runs in the background (call ${p.callId}). Do not call it again; its result will be at /v1/calls/${p.callId}.`;
}

const DETAILS_SHOWN = 5;

export function errorText(err: GatewayError, ctx: FormatContext, naming: Naming, calledName: string): string {
  let message = err.modelMessage;
  if (err.code === 'TOOL_NOT_FOUND' && naming === 'provider') message = notFoundText(err, ctx, calledName);
  const problems = err.code === 'INVALID_ARGUMENTS' ? err.details.slice(0, DETAILS_SHOWN).map((d) => `${d.path ?? '/'}: ${d.message}`) : [];
  return `Error ${err.code}: ${message}${problems.length > 0 ? ` Problems: ${problems.join('; ')}.` : ''}`;
}

/** The pipeline suggests canonical names; a provider's model knows the tools by their provider names. */
function notFoundText(err: GatewayError, ctx: FormatContext, named: string): string {
  const close = err.details
    .map((d) => d['suggestion'])
    .filter((s): s is string => typeof s === 'string')
    .map((s) => `'${ctx.registry.get(s)?.providerName ?? s}'`);
  const hint = close.length > 0 ? `Did you mean ${close.join(' or ')}?` : 'Use one of the tools you were given.';
  return `There is no tool named '${named}'. ${hint}`;
}
