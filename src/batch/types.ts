import type { GatewayError } from '../errors.js';
import type { CallResponse, PendingResponse, AcceptedResponse } from '../pipeline/index.js';
import type { Registry } from '../tools/registry.js';

export type DialectName = 'openai' | 'responses' | 'anthropic' | 'generic';

/** One call of a batch, as the model named it; `invalid` is set when its arguments could not be read. */
export interface BatchEntry {
  /** The dialect's call id (tool_call_id, call_id, tool_use_id, or the generic optional id). */
  id?: string | undefined;
  /** The name as sent: canonical or provider form. */
  name: string;
  args: unknown;
  invalid?: GatewayError;
}

/** What one entry came to, in request order. */
export type EntryOutcome =
  | { status: 'ok'; response: CallResponse }
  | { status: 'pending_confirmation'; response: PendingResponse }
  | { status: 'running'; response: AcceptedResponse }
  | { status: 'error'; error: GatewayError };

export interface ParsedBatch {
  dialect: Dialect;
  entries: BatchEntry[];
  sessionId?: string | undefined;
}

/** What a formatter may look up: canonical ↔ provider names for messages written to the model. */
export interface FormatContext {
  registry: Registry;
}

/** One dialect: how its calls are read and how the answers are written back, ready to append to the conversation. */
export interface Dialect {
  readonly name: DialectName;
  /** Reads the entries of a body already known to be this dialect; throws BAD_REQUEST with details. */
  parse(body: unknown): { entries: BatchEntry[]; sessionId?: string | undefined };
  format(entries: readonly BatchEntry[], outcomes: readonly EntryOutcome[], ctx: FormatContext): unknown;
}
