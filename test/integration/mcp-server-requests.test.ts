import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { ASKING, askedClients, callTool, serverRequestRecords, startAskingHttp, textOf, type AskedClient, type Mode } from '../helpers/asking.js';
import { EVERYTHING } from '../helpers/processes.js';
import { untilAsync } from '../helpers/wait.js';

// Server-to-client requests through the pool: a real MCP server (the v2-SDK fixture asking-server.mjs
// in both eras, over stdio and Streamable HTTP, and server-everything) asks for sampling, elicitation
// and roots while serving a call; the v2 SDK client that made the call through toolgate's /mcp (a
// 2025-11-25 session, or pinned to 2026-07-28) answers. Concurrent callers, callers that cannot be
// asked (no capability, REST) and a request with no call in flight.

const AGENT = 'relay-agent-key-0000001';
const OTHER = 'relay-other-key-0000002';
const node = process.execPath;
const SERVERS = ['s_modern', 's_legacy', 'h_modern', 'h_legacy'];
const MODES: Mode[] = ['legacy', 'modern'];

describe('sampling, elicitation and roots requests through the pool', () => {
  let gw: TestGateway;
  let base = '';
  const children: ChildProcess[] = [];
  const { connect, closeAll } = askedClients(() => base, AGENT);
  const records = (pred: (r: Record<string, unknown>) => boolean) => serverRequestRecords(gw, pred);

  beforeAll(async () => {
    const tools: Record<string, unknown> = {};
    for (const era of ['modern', 'legacy']) {
      tools[`s-${era}.yaml`] = { kind: 'mcp-server', name: `s_${era}`, transport: 'stdio', command: node, args: [ASKING, '--era', era], prestart: true };
      const started = await startAskingHttp(era);
      children.push(started.child);
      tools[`h-${era}.yaml`] = { kind: 'mcp-server', name: `h_${era}`, transport: 'streamable-http', url: `http://127.0.0.1:${started.port}/mcp`, prestart: true };
    }
    tools['everything.yaml'] = { kind: 'mcp-server', name: 'everything', transport: 'stdio', command: node, args: [EVERYTHING, 'stdio'], prestart: true, overrides: { 'trigger-sampling-request': { sideEffect: 'read' } } };
    gw = await startGateway({
      tools,
      config: { auth: { keys: [{ id: 'agent-1', key: AGENT, roles: ['agent'] }, { id: 'agent-2', key: OTHER, roles: ['agent'] }] }, mcp: { toolNames: 'canonical' } },
    });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    await untilAsync(async () => gw.app.gw.registry.tools.filter((t) => t.name.endsWith('.sample')).length === 4 && gw.app.gw.registry.get('everything.get-roots-list') !== undefined, 'tools imported', 20_000);
  }, 40_000);

  afterAll(async () => {
    await closeAll();
    await gw?.close();
    for (const c of children) c.kill('SIGKILL');
  });

  for (const mode of MODES) {
    for (const server of SERVERS) {
      it(`${mode} client, ${server}: sampling, elicitation and roots reach the client, its answers the server, each audited`, async () => {
        const who = `${mode}-${server}`;
        const c = await connect(mode, { who });
        expect(textOf(await callTool(c, `${server}.sample`, { text: 'hello' }))).toBe(`sampled: ${who} says hi (max 100) (model model-of-${who})`);
        expect(textOf(await callTool(c, `${server}.elicit`, { message: 'your name?' }))).toBe(`accept {"name":"${who}"}`);
        expect(textOf(await callTool(c, `${server}.roots`))).toBe(`file:///roots/${who}`);
        const mine = (await records((r) => r['backend'] === server && r['caller'] === 'agent-1' && r['outcome'] === 'ok')).slice(-3);
        expect(mine.map((r) => r['kind'])).toEqual(['sampling', 'elicitation', 'roots']);
        expect(mine[0]).toMatchObject({ tool: `${server}.sample`, maxTokens: 100 });
        expect(mine[0]?.['requestId']).toEqual(expect.any(String));
        // Never the prompt, the form or the answer.
        expect(JSON.stringify(mine)).not.toMatch(/hello|your name|says hi|roots\//);
      });
    }
  }

  for (const server of ['h_legacy', 'h_modern', 's_modern']) {
    it(`two callers at once on ${server}: each client gets only its own request`, async () => {
      const slow = (who: string, seen: string[]): AskedClient => ({ who, seen, onSampling: async (p) => (await sleep(200), { role: 'assistant', model: who, content: { type: 'text', text: `${who} (max ${String(p['maxTokens'])})` } }) });
      const seenA: string[] = [];
      const seenB: string[] = [];
      const a = await connect('legacy', slow('A', seenA));
      const b = await connect('modern', slow('B', seenB), OTHER);
      const [ra, rb] = await Promise.all([
        callTool(a, `${server}.sample`, { text: 'from A', delayMs: 150 }),
        callTool(b, `${server}.sample`, { text: 'from B', maxTokens: 7, delayMs: 150 }),
      ]);
      expect(textOf(ra)).toBe('sampled: A (max 100) (model A)');
      expect(textOf(rb)).toBe('sampled: B (max 7) (model B)');
      expect(seenA).toEqual(['sampling from A']);
      expect(seenB).toEqual(['sampling from B']);
    });
  }

  it('a stdio 2025 server names no call: with two in flight its requests are refused (never guessed), with one it is answered', async () => {
    const seenA: string[] = [];
    const seenB: string[] = [];
    const a = await connect('legacy', { who: 'A', seen: seenA });
    const b = await connect('legacy', { who: 'B', seen: seenB }, OTHER);
    const [ra, rb] = await Promise.all([callTool(a, 's_legacy.sample', { text: 'from A', delayMs: 200 }), callTool(b, 's_legacy.sample', { text: 'from B', delayMs: 200 })]);
    // The first request finds both calls in flight: refused. The second may find the other call
    // already failed (then exactly one is in flight, and it is that call's own).
    for (const [r, who] of [[ra, 'A'], [rb, 'B']] as const) if (!r['isError']) expect(textOf(r)).toBe(`sampled: ${who} says hi (max 100) (model model-of-${who})`);
    expect(seenA.every((s) => s === 'sampling from A')).toBe(true);
    expect(seenB.every((s) => s === 'sampling from B')).toBe(true);
    expect([ra['isError'], rb['isError']]).toContain(true);
    const refused = await records((r) => r['backend'] === 's_legacy' && r['reason'] === 'ambiguous');
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused[0]).toMatchObject({ outcome: 'refused', code: -32601, kind: 'sampling' });
    // Alone, the same call goes through.
    expect(textOf(await callTool(a, 's_legacy.sample', { text: 'alone' }))).toBe('sampled: A says hi (max 100) (model model-of-A)');
  });

  for (const mode of MODES) {
    it(`${mode}: a client that did not declare the capability (or the mode) is never asked; the server gets the spec's error`, async () => {
      const seen: string[] = [];
      const c = await connect(mode, { who: 'plain', seen, capabilities: { elicitation: { url: {} } } });
      const sampled = await callTool(c, 'h_legacy.sample', { text: 'x' });
      expect(sampled['isError']).toBe(true);
      const elicited = await callTool(c, 's_modern.elicit', { message: 'form please' });
      expect(elicited['isError']).toBe(true);
      expect(seen).toEqual([]);
      const refused = await records((r) => r['caller'] === 'agent-1' && r['reason'] === 'no_capability');
      expect(refused.slice(-2).map((r) => [r['backend'], r['kind'], r['code']])).toEqual([['h_legacy', 'sampling', -32601], ['s_modern', 'elicitation', -32602]]);
    });
  }

  it('a REST caller has no MCP client: the server request is refused and audited, the call answers an error', async () => {
    const res = await gw.call('h_modern.sample', { text: 'rest' }, { key: AGENT });
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ error: { code: 'UPSTREAM_ERROR' } });
    const refused = (await records((r) => r['backend'] === 'h_modern' && r['reason'] === 'no_client')).at(-1);
    expect(refused).toMatchObject({ outcome: 'refused', code: -32601, caller: 'agent-1', tool: 'h_modern.sample', kind: 'sampling' });
  });

  it('server-everything: its roots/list at connect (no call in flight) is refused and audited; its sampling and roots tools are relayed', async () => {
    await untilAsync(async () => (await records((r) => r['backend'] === 'everything' && r['reason'] === 'no_call')).length > 0, 'roots/list at connect refused', 5000);
    const [early] = await records((r) => r['backend'] === 'everything' && r['reason'] === 'no_call');
    expect(early).toMatchObject({ kind: 'roots', outcome: 'refused', code: -32601 });
    expect(early?.['caller']).toBeUndefined();
    const c = await connect('legacy', { who: 'ev' });
    expect(textOf(await callTool(c, 'everything.trigger-sampling-request', { prompt: 'tell me', maxTokens: 20 }))).toMatch(/ev says hi \(max 20\)/);
    expect(textOf(await callTool(c, 'everything.get-roots-list'))).toMatch(/file:\/\/\/roots\/ev/);
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
