import { describe, expect, it } from 'vitest';
import { isGatewayError } from '../../src/errors.js';
import { admit, type Admission } from '../../src/pipeline/admit.js';
import { Idempotency } from '../../src/pipeline/idempotency.js';
import { MemoryStore } from '../../src/state/memory.js';

/** The admission stage on the in-memory store (no `admit`: the checks one by one), with the Redis script's contract. */
describe('admission on the memory store', () => {
  const setup = () => {
    const store = new MemoryStore();
    const idem = new Idempotency<{ answer: number }>(store, 60_000);
    return { store, idem };
  };
  const code = async (p: Promise<unknown>) => p.then(() => 'ok', (e: unknown) => (isGatewayError(e) ? e.code : 'other'));
  const call = (over: Partial<Admission> = {}): Admission => ({
    caller: 'agent-1',
    tool: 'util.echo',
    loop: { sessionId: 's-1', argsDigest: 'd-1', loopRepeats: 1, loopWindowSeconds: 60 },
    ...over,
  });

  it('a replay of a stored answer is not counted as a repeat by the loop guard', async () => {
    const { store, idem } = setup();
    const withKey = call({ idem: { owner: 'alice', key: 'k-1', digest: 'x' } });
    expect(await admit(store, idem, withKey)).toBeUndefined();
    await idem.complete('alice', 'k-1', 'x', { answer: 42 });
    for (let i = 0; i < 3; i++) expect(await admit(store, idem, withKey)).toEqual({ replay: { answer: 42 } });
    expect(await code(admit(store, idem, call()))).toBe('LOOP_DETECTED'); // the second run of the same arguments
  });

  it('a call refused by the loop guard leaves its Idempotency-Key free', async () => {
    const { store, idem } = setup();
    expect(await admit(store, idem, call())).toBeUndefined();
    expect(await code(admit(store, idem, call({ idem: { owner: 'alice', key: 'k-2', digest: 'x' } })))).toBe('LOOP_DETECTED');
    expect(await store.get(idem.key('alice', 'k-2'))).toBeUndefined();
  });

  it('a rate-limited call claims nothing and counts no repeat', async () => {
    const { store, idem } = setup();
    const rate = { caller: { requests: 1, windowSeconds: 60 } };
    expect(await admit(store, idem, call({ rate, loop: undefined }))).toBeUndefined();
    const refused = admit(store, idem, call({ rate, idem: { owner: 'alice', key: 'k-3', digest: 'x' } }));
    expect(await code(refused)).toBe('RATE_LIMITED');
    expect(await store.get(idem.key('alice', 'k-3'))).toBeUndefined();
    expect(await admit(store, idem, call())).toBeUndefined(); // the loop guard's first count for these arguments
  });
});
