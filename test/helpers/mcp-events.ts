import { EventEmitter } from 'node:events';
import { McpPoolError, type McpPool, type McpPoolEventMap } from '../../src/mcp/pool.js';

/** Resolves with the first pool event matching, or fails after `ms`. */
export function nextEvent<K extends keyof McpPoolEventMap>(
  pool: McpPool, event: K, match: (...args: McpPoolEventMap[K]) => boolean, ms = 10000,
): Promise<McpPoolEventMap[K]> {
  // Seen as a plain emitter: TypeScript cannot check a listener of a generic event key.
  const emitter: EventEmitter = pool;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(event, listener);
      reject(new Error(`no '${String(event)}' event within ${ms} ms`));
    }, ms);
    const listener = (...args: McpPoolEventMap[K]): void => {
      if (!match(...args)) return;
      clearTimeout(timer);
      emitter.off(event, listener);
      resolve(args);
    };
    emitter.on(event, listener);
  });
}

/** The McpPoolError a call fails with (any other outcome fails the test). */
export async function catchError(promise: Promise<unknown>): Promise<McpPoolError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof McpPoolError) return err;
    throw err;
  }
  throw new Error('expected the call to fail');
}

/** A deadline `ms` from now (epoch ms). */
export const inMs = (ms: number): number => Date.now() + ms;
