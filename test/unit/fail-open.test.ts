import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { checkLoop } from '../../src/pipeline/loop-guard.js';
import { checkRateLimits } from '../../src/pipeline/rate-limit.js';
import { MemoryStore } from '../../src/state/memory.js';

/** A memory store whose Redis can be "down": every operation then throws UNAVAILABLE, as RedisStore does. */
class FlakyStore extends MemoryStore {
  down = false;
  override async increment(key: string, windowMs: number): Promise<number> {
    if (this.down) throw new GatewayError('UNAVAILABLE', 'shared state (Redis) is unavailable', { retryAfterSeconds: 1 });
    return super.increment(key, windowMs);
  }
}

const limits = { loopRepeats: 1, loopWindowSeconds: 60 };
const call = { caller: 'c', sessionId: 's', tool: 't', argsDigest: 'd' };

describe('limits fail open while the shared store is down', () => {
  it('the loop guard is skipped and warns once per outage', async () => {
    const store = new FlakyStore();
    const warnings: string[] = [];
    const warn = (msg: string) => warnings.push(msg);
    store.down = true;
    for (let i = 0; i < 5; i++) await expect(checkLoop(store, limits, call, warn)).resolves.toBeUndefined();
    expect(warnings).toEqual(['loop guard skipped: shared state is unavailable']);
    store.down = false;
    await checkLoop(store, limits, call, warn);
    await expect(checkLoop(store, limits, call, warn)).rejects.toMatchObject({ code: 'LOOP_DETECTED' });
    store.down = true;
    await checkLoop(store, limits, call, warn);
    expect(warnings).toHaveLength(2); // a new outage is news again
  });

  it('rate limits are skipped while down and count again when it returns', async () => {
    const store = new FlakyStore();
    const warnings: string[] = [];
    const rl = { caller: { requests: 1, windowSeconds: 60 } };
    store.down = true;
    for (let i = 0; i < 3; i++) await checkRateLimits(store, rl, { caller: 'c', tool: 't' }, (m) => warnings.push(m));
    expect(warnings).toHaveLength(1);
    store.down = false;
    await checkRateLimits(store, rl, { caller: 'c', tool: 't' });
    await expect(checkRateLimits(store, rl, { caller: 'c', tool: 't' })).rejects.toMatchObject({ code: 'RATE_LIMITED', status: 429 });
  });

  it('other failures are not swallowed', async () => {
    const store = new FlakyStore();
    store.increment = async () => {
      throw new Error('a bug');
    };
    await expect(checkLoop(store, limits, call)).rejects.toThrow('a bug');
  });
});
