import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtocolError, specTypeSchemas, withInputRequired, type Client, type InputRequiredResult } from '@modelcontextprotocol/client';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { ASKING, askedClients, callTool, serverRequestRecords, startAskingHttp, textOf, type Mode } from '../helpers/asking.js';
import { untilAsync } from '../helpers/wait.js';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport as SseV1 } from '@modelcontextprotocol/sdk/client/sse.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';

// Gateway policy on server requests (clientRequests in server files and overrides: refuse, cap
// maxTokens), progress and cancellation both ways on a relayed request, and hostile 2026-07-28
// retries (a forged requestState, another caller's). Real servers (asking-server.mjs), real v2 clients.

const AGENT = 'relay-policy-agent-000001';
const OTHER = 'relay-policy-other-000002';
const node = process.execPath;
const MODES: Mode[] = ['legacy', 'modern'];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('server requests: policy, progress, cancellation, bad input', () => {
  let gw: TestGateway;
  let base = '';
  let http: ChildProcess | undefined;
  const { connect, closeAll } = askedClients(() => base, AGENT);
  const records = (pred: (r: Record<string, unknown>) => boolean) => serverRequestRecords(gw, pred);
  const last = async (pred: (r: Record<string, unknown>) => boolean) => (await records(pred)).at(-1);

  beforeAll(async () => {
    const started = await startAskingHttp('legacy');
    http = started.child;
    const url = `http://127.0.0.1:${started.port}/mcp`;
    gw = await startGateway({
      tools: {
        'capped.yaml': {
          kind: 'mcp-server', name: 'capped', transport: 'stdio', command: node, args: [ASKING, '--era', 'modern'], prestart: true,
          clientRequests: { sampling: { maxTokens: 10 }, roots: { allow: false } },
          overrides: { elicit: { clientRequests: { elicitation: { allow: false } } } },
        },
        'nosample.yaml': {
          kind: 'mcp-server', name: 'nosample', transport: 'streamable-http', url, prestart: true,
          clientRequests: { sampling: { allow: false } },
          overrides: { sample_push: { clientRequests: { sampling: { allow: true } } } },
        },
        'legacy.yaml': { kind: 'mcp-server', name: 'legacy', transport: 'streamable-http', url, prestart: true },
      },
      config: { auth: { keys: [{ id: 'agent-1', key: AGENT, roles: ['agent'] }, { id: 'agent-2', key: OTHER, roles: ['agent'] }] }, mcp: { toolNames: 'canonical' } },
    });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    await untilAsync(async () => ['capped.sample', 'nosample.sample_push', 'legacy.sample_push'].every((n) => gw.app.gw.registry.get(n)), 'tools imported', 20_000);
  }, 40_000);

  afterAll(async () => {
    await closeAll();
    await gw?.close();
    http?.kill('SIGKILL');
  });

  for (const mode of MODES) {
    it(`${mode}: maxTokens above the server file's cap is cut to it (audited with both), below it passes as asked`, async () => {
      const c = await connect(mode, { who: 'cap' });
      expect(textOf(await callTool(c, 'capped.sample', { text: 'long', maxTokens: 500 }))).toBe('sampled: cap says hi (max 10) (model model-of-cap)');
      expect(await last((r) => r['backend'] === 'capped' && r['kind'] === 'sampling')).toMatchObject({ outcome: 'ok', maxTokens: 10, maxTokensAsked: 500, caller: 'agent-1', tool: 'capped.sample' });
      expect(textOf(await callTool(c, 'capped.sample', { text: 'short', maxTokens: 5 }))).toBe('sampled: cap says hi (max 5) (model model-of-cap)');
      const short = await last((r) => r['backend'] === 'capped' && r['kind'] === 'sampling');
      expect(short).toMatchObject({ outcome: 'ok', maxTokens: 5 });
      expect(short).not.toHaveProperty('maxTokensAsked');
    });

    it(`${mode}: allow: false refuses (server file, override), a tool's allow: true overrides its server's false; the client is never asked`, async () => {
      const seen: string[] = [];
      const c = await connect(mode, { who: 'pol', seen });
      expect((await callTool(c, 'capped.roots'))['isError']).toBe(true);
      expect(await last((r) => r['backend'] === 'capped' && r['kind'] === 'roots')).toMatchObject({ outcome: 'refused', reason: 'policy', code: -1, tool: 'capped.roots' });
      expect((await callTool(c, 'capped.elicit', { message: 'name?' }))['isError']).toBe(true);
      expect(await last((r) => r['backend'] === 'capped' && r['kind'] === 'elicitation')).toMatchObject({ outcome: 'refused', reason: 'policy', code: -1 });
      expect((await callTool(c, 'nosample.sample', { text: 'no' }))['isError']).toBe(true);
      expect(await last((r) => r['backend'] === 'nosample')).toMatchObject({ outcome: 'refused', reason: 'policy', tool: 'nosample.sample' });
      expect(seen).toEqual([]);
      if (mode === 'legacy') {
        expect(textOf(await callTool(c, 'nosample.sample_push', { text: 'yes' }))).toBe('sampled: pol says hi (max 50) (progress 0)');
        expect(seen).toEqual(['sampling yes']);
      }
    });
  }

  it('a 1.x SDK client on /sse (2024-11-05) is asked on its stream, capped like any', async () => {
    const client = new ClientV1({ name: 'sse-relay', version: '1.0.0' }, { capabilities: { sampling: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => ({ role: 'assistant', model: 'sse', content: { type: 'text', text: `sse (max ${req.params.maxTokens})` } }));
    const headers = { authorization: `Bearer ${AGENT}` };
    const transport = new SseV1(new URL(`${base}/sse`), { requestInit: { headers }, eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }) } });
    await client.connect(transport);
    try {
      expect(textOf((await client.callTool({ name: 'legacy.sample', arguments: { text: 'old' } })) as Record<string, unknown>)).toBe('sampled: sse (max 100) (model sse)');
      expect(textOf((await client.callTool({ name: 'capped.sample', arguments: { text: 'old', maxTokens: 99 } })) as Record<string, unknown>)).toBe('sampled: sse (max 10) (model sse)');
    } finally {
      await client.close();
    }
  });

  it("the client's progress on a relayed sampling request reaches the server", async () => {
    const c = await connect('legacy', {
      onSampling: async (_p, _signal, progress) => {
        await progress(1);
        await progress(2);
        await sleep(50);
        return { role: 'assistant', model: 'm', content: { type: 'text', text: 'done' } };
      },
    });
    expect(textOf(await callTool(c, 'legacy.sample_push', { text: 'go' }))).toBe('sampled: done (progress 2)');
  });

  it('the server cancelling its sampling request cancels the one sent to the client', async () => {
    let aborted = false;
    const c = await connect('legacy', { onSampling: (_p, signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => ((aborted = true), reject(new Error('cancelled'))))) });
    const r = await callTool(c, 'legacy.sample_push', { text: 'wait', cancelAfterMs: 300 });
    expect(r['isError']).toBe(true);
    await untilAsync(async () => aborted, 'the client told of the cancellation', 3000);
    await untilAsync(async () => (await last((x) => x['backend'] === 'legacy' && x['tool'] === 'legacy.sample_push'))?.['outcome'] === 'cancelled', 'audited as cancelled', 3000);
  });

  for (const server of ['legacy', 'capped']) {
    it(`the client cancelling its tools/call (${server}) cancels the call and the sampling request relayed to it`, async () => {
      let asked = false;
      let aborted = false;
      const c = await connect('legacy', { onSampling: (_p, signal) => ((asked = true), new Promise((_resolve, reject) => signal.addEventListener('abort', () => ((aborted = true), reject(new Error('cancelled')))))) });
      const ac = new AbortController();
      const pending = callTool(c, `${server}.sample`, { text: 'cancel me' }, ac.signal);
      await untilAsync(async () => asked, 'the client was asked', 5000);
      ac.abort(new Error('user pressed stop'));
      await expect(pending).rejects.toThrow();
      await untilAsync(async () => aborted, 'the relayed request cancelled', 3000);
      await untilAsync(async () => (await last((x) => x['backend'] === server && x['kind'] === 'sampling'))?.['outcome'] === 'cancelled', 'audited as cancelled', 3000);
    });
  }

  it('2026-07-28: a forged requestState, or one replayed by another key, is refused with -32602; its owner resumes the call', async () => {
    const owner = await connect('modern', { who: 'owner' });
    const other = await connect('modern', { who: 'other' }, OTHER);
    const schema = withInputRequired(specTypeSchemas.CallToolResult);
    const send = (c: Client, params: Record<string, unknown>) => c.request({ method: 'tools/call', params: { name: 'capped.sample', arguments: { text: 'mrtr' }, ...params } } as never, schema, { allowInputRequired: true });
    const first = (await send(owner, {})) as InputRequiredResult;
    expect(first.resultType).toBe('input_required');
    const [key] = Object.keys(first.inputRequests ?? {});
    expect(first.inputRequests?.[key!]).toMatchObject({ method: 'sampling/createMessage', params: { maxTokens: 10 } });
    const answer = { [key!]: { role: 'assistant', model: 'manual', content: { type: 'text', text: 'by hand' } } };
    for (const [c, state] of [[owner, 'tgr1.forged-state'], [other, first.requestState]] as const) {
      const refused = await send(c, { requestState: state, inputResponses: answer }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ProtocolError);
      expect((refused as ProtocolError).code).toBe(-32602);
    }
    const done = (await send(owner, { requestState: first.requestState, inputResponses: answer })) as Record<string, unknown>;
    expect(textOf(done)).toBe('sampled: by hand (model manual)');
  });
});
