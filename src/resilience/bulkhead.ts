import { GatewayError } from '../errors.js';
import type { CompiledTool } from '../tools/types.js';

/**
 * A concurrency cap per tool: a saturated tool answers UNAVAILABLE at once instead of queueing,
 * so it cannot slow the others down.
 */
export class Bulkhead {
  private readonly inFlight = new Map<string, number>();

  /** Takes a slot or throws; `release` gives it back (once per acquire). */
  acquire(tool: CompiledTool): void {
    const n = this.inFlight.get(tool.name) ?? 0;
    if (n >= tool.concurrency) {
      throw new GatewayError('UNAVAILABLE', `'${tool.name}' already has ${n} calls in flight (its limit)`, {
        retryAfterSeconds: 1,
        modelMessage: `The tool '${tool.name}' is busy. Wait a moment before calling it again.`,
      });
    }
    this.inFlight.set(tool.name, n + 1);
  }

  release(tool: CompiledTool): void {
    const left = (this.inFlight.get(tool.name) ?? 1) - 1;
    if (left <= 0) this.inFlight.delete(tool.name);
    else this.inFlight.set(tool.name, left);
  }

  current(toolName: string): number {
    return this.inFlight.get(toolName) ?? 0;
  }
}
