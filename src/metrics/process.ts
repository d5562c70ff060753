import { Registry, collectDefaultMetrics } from 'prom-client';

let shared: Registry | undefined;

/**
 * Node's default metrics (CPU, memory, event-loop lag, GC) on a registry of their own. They
 * describe the process, not one app, and each collector adds an event-loop monitor and a GC
 * observer that never stop: one per process, however many apps a test file builds.
 */
export function processMetrics(): Registry {
  if (!shared) {
    shared = new Registry();
    collectDefaultMetrics({ register: shared });
  }
  return shared;
}
