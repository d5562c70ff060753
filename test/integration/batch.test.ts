import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoTool, startGateway, twoAgents, type TestGateway } from '../helpers/app.js';

const AGENT = 'batch-agent-key-01';
const OTHER = 'batch-other-key-02';

type Json = Record<string, unknown>;

/** POST /v1/calls over real HTTP: every dialect in and out, per-entry failures, gates, order under concurrency. */
describe('POST /v1/calls (batches in the client\'s own format)', () => {
  let gw: TestGateway;
  let base: string;

  const post = async (body: unknown, key: string | null = AGENT, requestId?: string) => {
    const res = await fetch(`${base}/v1/calls`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(requestId ? { 'x-request-id': requestId } : {}),
      },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const confirmationIn = (text: string) => /confirmation (cf_[A-Za-z0-9_-]+)/.exec(text)?.[1];

  beforeAll(async () => {
    gw = await startGateway({
      config: {
        auth: twoAgents(AGENT, OTHER),
      },
      tools: {
        'echo.yaml': echoTool('debug.echo', {
          inputSchema: { type: 'object', required: ['message'], additionalProperties: false, properties: { message: { type: 'string' } } },
        }),
        'delay.yaml': { ...echoTool('debug.delay'), backends: [{ id: 'b', builtin: 'delay' }] },
        'delete.yaml': { ...echoTool('files.delete'), sideEffect: 'destructive' },
      },
    });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => gw.close());

  it('OpenAI tool_calls: results as tool messages in order; malformed arguments, unknown tool and a gate are entries of their own', async () => {
    const tool_calls = [
      { id: 'call_1', type: 'function', function: { name: 'debug__echo', arguments: '{"message":"hello"}' } },
      { id: 'call_2', type: 'function', function: { name: 'debug__echo', arguments: '{"message": "hi"' } },
      { id: 'call_3', type: 'function', function: { name: 'debug__ecko', arguments: '{}' } },
      { id: 'call_4', type: 'function', function: { name: 'files__delete', arguments: '{"path":"/tmp/x"}' } },
      { id: 'call_5', type: 'function', function: { name: 'debug.echo', arguments: '{"message":42}' } },
    ];
    const { status, body } = await post({ role: 'assistant', content: null, tool_calls }, AGENT, 'batch-openai-1');
    expect(status).toBe(200);
    const messages = body['messages'] as { role: string; tool_call_id: string; content: string }[];
    expect(messages.map((m) => [m.role, m.tool_call_id])).toEqual(tool_calls.map((c) => ['tool', c.id]));
    expect(JSON.parse(messages[0]!.content)).toEqual({ message: 'hello' });
    expect(messages[1]!.content).toMatch(/^Error INVALID_ARGUMENTS: The arguments for 'debug__echo' were not valid JSON/);
    expect(messages[2]!.content).toMatch(/^Error TOOL_NOT_FOUND: .*'debug__ecko'.*Did you mean 'debug__echo'/);
    const cf = confirmationIn(messages[3]!.content);
    expect(messages[3]!.content).toMatch(/needs a person's approval/);
    expect((await gw.app.gw.confirmations.get(cf!))?.status).toBe('pending');
    expect(messages[4]!.content).toMatch(/^Error INVALID_ARGUMENTS: .*Problems: \/message: must be string/);

    // Audit: one record per call that reached the pipeline (not the unreadable one), canonical names, the batch's request id.
    const records = (await gw.audit()).filter((r) => r['event'] === 'call' && r['requestId'] === 'batch-openai-1');
    const outcomes = records.map((r) => [r['tool'], r['outcome'], r['errorCode'] ?? null]);
    expect(outcomes).toHaveLength(4);
    expect(outcomes).toEqual(
      expect.arrayContaining([
        ['debug.echo', 'ok', null],
        ['debug__ecko', 'error', 'TOOL_NOT_FOUND'],
        ['files.delete', 'pending_confirmation', null],
        ['debug.echo', 'error', 'INVALID_ARGUMENTS'],
      ]),
    );
  });

  it('OpenAI: a bare tool_calls array is accepted too', async () => {
    const { status, body } = await post([{ id: 'c1', type: 'function', function: { name: 'debug__echo', arguments: '{"message":"x"}' } }]);
    expect(status).toBe(200);
    expect(body).toEqual({ messages: [{ role: 'tool', tool_call_id: 'c1', content: '{"message":"x"}' }] });
  });

  it('OpenAI Responses: function_call items of output, input or a bare list; answered calls and other items are skipped', async () => {
    const output = [
      { type: 'reasoning', id: 'rs_1', summary: [] },
      { type: 'function_call', id: 'fc_1', call_id: 'call_a', name: 'debug__echo', arguments: '{"message":"one"}' },
      { type: 'message', role: 'assistant', content: [] },
      { type: 'function_call', id: 'fc_2', call_id: 'call_b', name: 'debug__echo', arguments: 'not json' },
    ];
    const a = await post({ output });
    expect(a.status).toBe(200);
    const items = a.body['output'] as { type: string; call_id: string; output: string }[];
    expect(items.map((i) => [i.type, i.call_id])).toEqual([
      ['function_call_output', 'call_a'],
      ['function_call_output', 'call_b'],
    ]);
    expect(items[0]!.output).toBe('{"message":"one"}');
    expect(items[1]!.output).toMatch(/^Error INVALID_ARGUMENTS/);

    const input = [...output, { type: 'function_call_output', call_id: 'call_a', output: 'done before' }];
    const b = await post({ input });
    expect((b.body['output'] as { call_id: string }[]).map((i) => i.call_id)).toEqual(['call_b']);

    const c = await post([output[1]]);
    expect(c.body).toEqual({ output: [{ type: 'function_call_output', call_id: 'call_a', output: '{"message":"one"}' }] });
  });

  it('Anthropic: tool_use blocks (others ignored) → one user message of tool_result blocks with is_error', async () => {
    const content = [
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'toolu_1', name: 'debug__echo', input: { message: 'hey' } },
      { type: 'tool_use', id: 'toolu_2', name: 'debug__echo', input: { nope: true } },
      { type: 'tool_use', id: 'toolu_3', name: 'files__delete', input: { path: '/x' } },
    ];
    const { status, body } = await post({ role: 'assistant', content, stop_reason: 'tool_use' });
    expect(status).toBe(200);
    expect(body['role']).toBe('user');
    const blocks = body['content'] as { type: string; tool_use_id: string; content: string; is_error: boolean }[];
    expect(blocks.map((b) => [b.type, b.tool_use_id, b.is_error])).toEqual([
      ['tool_result', 'toolu_1', false],
      ['tool_result', 'toolu_2', true],
      ['tool_result', 'toolu_3', false],
    ]);
    expect(blocks[0]!.content).toBe('{"message":"hey"}');
    expect(blocks[1]!.content).toMatch(/INVALID_ARGUMENTS/);
    expect(confirmationIn(blocks[2]!.content)).toMatch(/^cf_/);
  });

  it('generic: canonical names in the results (provider names map back), full result, confirmation or error', async () => {
    const { status, body } = await post({
      sessionId: 's-1',
      calls: [
        { id: 'a', tool: 'debug__echo', arguments: { message: 'm' } },
        { tool: 'files.delete', arguments: { path: '/y' } },
        { id: 'c', tool: 'no.such' },
      ],
    });
    expect(status).toBe(200);
    const results = body['results'] as Json[];
    expect(results[0]).toMatchObject({ id: 'a', tool: 'debug.echo', status: 'ok', result: { structuredContent: { message: 'm' }, isError: false } });
    expect(results[0]!['callId']).toMatch(/^c_/);
    expect(results[1]).toMatchObject({ tool: 'files.delete', status: 'pending_confirmation', confirmation: { id: expect.stringMatching(/^cf_/) } });
    expect(results[1]).not.toHaveProperty('id');
    expect(results[2]).toMatchObject({ id: 'c', tool: 'no.such', status: 'error', error: { code: 'TOOL_NOT_FOUND' } });
    const audit = await gw.audit();
    expect(audit.filter((r) => r['sessionId'] === 's-1').map((r) => r['tool'])).toEqual(expect.arrayContaining(['debug.echo', 'files.delete', 'no.such']));
  });

  it('20 calls at once come back in request order, whatever order they finish in', async () => {
    const calls = Array.from({ length: 20 }, (_, i) => ({ id: `d${i}`, tool: 'debug.delay', arguments: { ms: (20 - i) * 3, n: i } }));
    const { status, body } = await post({ calls });
    expect(status).toBe(200);
    const results = body['results'] as { id: string; status: string; result: { structuredContent: { n: number } } }[];
    expect(results.map((r) => r.id)).toEqual(calls.map((c) => c.id));
    expect(results.map((r) => r.result.structuredContent.n)).toEqual(calls.map((_, i) => i));
    expect(results.every((r) => r.status === 'ok')).toBe(true);
  });

  it('runs as the caller: a tool the key may not see is that entry\'s error', async () => {
    const { body } = await post({ calls: [{ tool: 'debug.echo', arguments: { message: 'ok' } }, { tool: 'files.delete', arguments: {} }] }, OTHER);
    const results = body['results'] as Json[];
    expect(results.map((r) => r['status'])).toEqual(['ok', 'error']);
    expect(results[1]).toMatchObject({ error: { code: 'FORBIDDEN' } });
  });

  it('400 for a body in no known format, a batch with no call, or a malformed entry; 413 over the limit; 401 without a key', async () => {
    for (const bad of [{ hello: 'world' }, 'text', [], { tool_calls: [] }, { content: [{ type: 'text', text: 'no tools' }] }]) {
      const r = await post(bad);
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect((r.body['error'] as Json)['code']).toBe('BAD_REQUEST');
    }
    const noName = await post({ tool_calls: [{ id: 'x', function: { arguments: '{}' } }] });
    expect(noName.status).toBe(400);
    expect((noName.body['error'] as Json)['details']).toEqual([{ path: '/tool_calls/0/function', message: "missing required property 'name'" }]);
    const badUse = await post({ content: [{ type: 'tool_use', id: 't', input: {} }] });
    expect((badUse.body['error'] as { details: { path: string }[] }).details[0]!.path).toBe('/content/0');
    const many = await post({ calls: Array.from({ length: 65 }, () => ({ tool: 'debug.echo', arguments: { message: 'x' } })) });
    expect(many.status).toBe(413);
    expect((many.body['error'] as Json)['code']).toBe('PAYLOAD_TOO_LARGE');
    expect((await post({ calls: [{ tool: 'debug.echo' }] }, null)).status).toBe(401);
  });
});

