import { GatewayError, isGatewayError } from '../errors.js';
import type { CallPipeline, CallRequest } from '../pipeline/index.js';
import type { BatchEntry, EntryOutcome } from './types.js';

/** Runs `fn` over the items, at most `limit` at a time; results keep the items' order. */
export async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** What every call of the batch shares: the caller, the request, the session. */
export type BatchCallBase = Omit<CallRequest, 'toolName' | 'args' | 'idempotencyKey' | 'approval'>;

/**
 * Each entry goes through the whole pipeline as its own call (its own callId, audit record and
 * metrics); a failure becomes that entry's outcome and never fails the batch.
 */
export function runBatch(pipeline: CallPipeline, entries: readonly BatchEntry[], base: BatchCallBase, concurrency: number): Promise<EntryOutcome[]> {
  return mapBounded(entries, concurrency, async (e): Promise<EntryOutcome> => {
    if (e.invalid) return { status: 'error', error: e.invalid };
    try {
      const response = await pipeline.call({ ...base, toolName: e.name, args: e.args });
      if (response.status === 'ok') return { status: 'ok', response };
      return response.status === 'running' ? { status: 'running', response } : { status: 'pending_confirmation', response };
    } catch (err) {
      const error = isGatewayError(err) ? err : new GatewayError('INTERNAL', 'the call failed inside the gateway', { cause: err });
      return { status: 'error', error };
    }
  });
}
