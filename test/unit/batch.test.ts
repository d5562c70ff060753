import { describe, expect, it } from 'vitest';
import { parseBatch } from '../../src/batch/detect.js';
import { mapBounded } from '../../src/batch/run.js';
import { isGatewayError } from '../../src/errors.js';

const fails = (body: unknown, max = 64) => {
  try {
    parseBatch(body, max);
  } catch (e) {
    if (isGatewayError(e)) return { code: e.code, message: e.message, details: e.details };
    throw e;
  }
  throw new Error('parsed');
};

describe('batch dialects: detection and reading', () => {
  it('reads OpenAI tool_calls: alone, as the assistant message, or a bare array; string arguments parsed, empty meaning none', () => {
    const call = { id: 'c1', type: 'function', function: { name: 'a__b', arguments: '{"x":1}' } };
    for (const body of [{ tool_calls: [call] }, { role: 'assistant', content: null, refusal: null, tool_calls: [call] }, [call]]) {
      const b = parseBatch(body, 64);
      expect(b.dialect.name).toBe('openai');
      expect(b.entries).toEqual([{ id: 'c1', name: 'a__b', args: { x: 1 } }]);
    }
    const empty = parseBatch({ tool_calls: [{ id: 'e', function: { name: 'n', arguments: '' } }] }, 64);
    expect(empty.entries[0]?.args).toEqual({});
  });

  it('a malformed arguments string is that entry\'s INVALID_ARGUMENTS, not an error of the batch', () => {
    const b = parseBatch({ tool_calls: [{ id: 'c', function: { name: 'n', arguments: '{"x":' } }, { id: 'd', function: { name: 'n', arguments: '{}' } }] }, 64);
    expect(b.entries[0]?.invalid?.code).toBe('INVALID_ARGUMENTS');
    expect(b.entries[0]?.invalid?.modelMessage).toMatch(/not valid JSON/);
    expect(b.entries[1]?.invalid).toBeUndefined();
  });

  it('reads Responses function_call items from output, input or a bare list, skipping other items and calls already answered', () => {
    const items = [
      { type: 'message', role: 'user', content: 'hi' },
      { type: 'function_call', call_id: 'k1', name: 'a', arguments: '{}' },
      { type: 'function_call', call_id: 'k2', name: 'b', arguments: '{"y":2}' },
      { type: 'function_call_output', call_id: 'k1', output: 'done' },
    ];
    expect(parseBatch({ input: items }, 64).entries.map((e) => e.id)).toEqual(['k2']);
    expect(parseBatch({ output: items.slice(0, 3), sessionId: 's' }, 64)).toMatchObject({ sessionId: 's', entries: [{ id: 'k1' }, { id: 'k2', args: { y: 2 } }] });
    expect(parseBatch(items.slice(1, 2), 64).dialect.name).toBe('responses');
  });

  it('reads Anthropic tool_use blocks, ignoring text and thinking blocks', () => {
    const b = parseBatch({ role: 'assistant', content: [{ type: 'thinking', thinking: '…' }, { type: 'tool_use', id: 't1', name: 'x__y', input: { q: 1 } }, { type: 'text', text: 'ok' }] }, 64);
    expect(b.dialect.name).toBe('anthropic');
    expect(b.entries).toEqual([{ id: 't1', name: 'x__y', args: { q: 1 } }]);
  });

  it('reads the generic form strictly', () => {
    expect(parseBatch({ calls: [{ tool: 'a.b' }], sessionId: 's1' }, 64)).toMatchObject({ sessionId: 's1', entries: [{ name: 'a.b', args: {} }] });
    expect(fails({ calls: [{ tool: 'a.b', argument: {} }] })).toMatchObject({ code: 'BAD_REQUEST', details: [{ path: '/calls/0/argument' }] });
  });

  it('refuses what is no batch, holds no call, is malformed, or is too big', () => {
    expect(fails({ messages: [] })).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(/^unrecognised batch/) });
    expect(fails(null).code).toBe('BAD_REQUEST');
    expect(fails({ content: [{ type: 'text', text: 'no call' }] }).message).toMatch(/holds no tool call/);
    expect(fails({ output: [{ type: 'function_call', call_id: 'x', arguments: '{}' }] })).toMatchObject({ details: [{ path: '/output/0', message: "missing required property 'name'" }] });
    expect(fails({ calls: [{ tool: 'a' }, { tool: 'b' }, { tool: 'c' }] }, 2).code).toBe('PAYLOAD_TOO_LARGE');
  });
});

describe('mapBounded', () => {
  it('keeps the order of the items and never runs more than the limit at once', async () => {
    let running = 0;
    let most = 0;
    const gates: (() => void)[] = [];
    const done = mapBounded([...Array(10).keys()], 3, async (n) => {
      running++;
      most = Math.max(most, running);
      await new Promise<void>((r) => gates.push(r));
      running--;
      return n * 2;
    });
    // Release the waiting calls newest first, as they arrive, until all are done.
    while (gates.length > 0 || running > 0) {
      await Promise.resolve();
      gates.pop()?.();
      await new Promise((r) => setImmediate(r));
    }
    expect(await done).toEqual([0, 2, 4, 6, 8, 10, 12, 14, 16, 18]);
    expect(most).toBe(3);
  });
});
