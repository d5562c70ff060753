import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport, type ClientCapabilities } from '@modelcontextprotocol/client';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { untilAsync } from '../helpers/wait.js';

// Server-to-client requests through the pool: a real MCP server (the v2-SDK fixture asking-server.mjs,
// both eras, stdio and Streamable HTTP) asks for sampling, elicitation and roots while serving a
// call; the v2 SDK client that made the call through toolgate's /mcp (a 2025-11-25 session, or
// pinned to 2026-07-28) answers; policy, capabilities, audit, concurrency and cancellation.

const AGENT = 'relay-agent-key-0000001';
const OTHER = 'relay-other-key-0000002';
const node = process.execPath;
const ASKING = fileURLToPath(new URL('../fixtures/mcp/asking-server.mjs', import.meta.url));
const MODERN = '2026-07-28';

type Mode = 'legacy' | 'modern';
type Text = { type: string; text?: string };
const textOf = (r: Record<string, unknown>) => ((r['content'] ?? []) as Text[]).map((b) => b.text ?? '').join('\n');

async function startHttp(era: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(node, [ASKING, '--era', era, '--transport', 'http', '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    child.stderr?.on('data', (c: Buffer) => {
      text += c.toString('utf8');
      const m = /listening on (\d+)/.exec(text);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`asking fixture (${era}) exited with ${code}: ${text}`)));
  });
  return { child, port };
}

interface Handlers {
  /** Answers sampling: the text it returns names `who` and the maxTokens it was asked for. */
  who?: string;
  capabilities?: ClientCapabilities;
  onSampling?: (params: Record<string, unknown>, signal: AbortSignal, progress: (n: number) => Promise<void>) => Promise<Record<string, unknown>>;
  seen?: string[];
}

describe('sampling, elicitation and roots requests through the pool', () => {
  let gw: TestGateway;
  let base = '';
  const children: ChildProcess[] = [];
  const clients: Client[] = [];

  async function connect(mode: Mode, h: Handlers = {}, key = AGENT): Promise<Client> {
    const capabilities = h.capabilities ?? { sampling: {}, elicitation: { form: {} }, roots: {} };
    const client = new Client({ name: 'relay-test', version: '1.0.0' }, { capabilities, ...(mode === 'modern' ? { versionNegotiation: { mode: { pin: MODERN } } } : {}) });
    const who = h.who ?? 'client';
    if (capabilities.sampling) {
      client.setRequestHandler('sampling/createMessage', async (req, ctx) => {
        const params = req.params as unknown as Record<string, unknown>;
        h.seen?.push(`sampling ${JSON.stringify((params['messages'] as { content: { text: string } }[])[0]?.content.text)}`);
        const token = (params['_meta'] as Record<string, unknown> | undefined)?.['progressToken'];
        const progress = async (n: number) => {
          if (token !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token as string, progress: n } });
        };
        if (h.onSampling) return h.onSampling(params, ctx.mcpReq.signal, progress) as never;
        return { role: 'assistant', model: `model-of-${who}`, content: { type: 'text', text: `${who} says hi (max ${String(params['maxTokens'])})` } };
      });
    }
    if (capabilities.elicitation) {
      client.setRequestHandler('elicitation/create', async (req) => {
        h.seen?.push(`elicitation ${req.params.message}`);
        return { action: 'accept', content: { name: who } };
      });
    }
    if (capabilities.roots) client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: `file:///roots/${who}`, name: who }] }));
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    clients.push(client);
    return client;
  }

  const call = async (c: Client, name: string, args: Record<string, unknown> = {}) => (await c.callTool({ name, arguments: args })) as Record<string, unknown>;
  const records = async (pred: (r: Record<string, unknown>) => boolean) => (await gw.audit()).filter((r) => r['event'] === 'server_request' && pred(r));

  beforeAll(async () => {
    const tools: Record<string, unknown> = {};
    for (const era of ['modern', 'legacy']) {
      tools[`s-${era}.yaml`] = { kind: 'mcp-server', name: `s_${era}`, transport: 'stdio', command: node, args: [ASKING, '--era', era], prestart: true };
      const started = await startHttp(era);
      children.push(started.child);
      tools[`h-${era}.yaml`] = { kind: 'mcp-server', name: `h_${era}`, transport: 'streamable-http', url: `http://127.0.0.1:${started.port}/mcp`, prestart: true };
    }
    gw = await startGateway({
      tools,
      config: { auth: { keys: [{ id: 'agent-1', key: AGENT, roles: ['agent'] }, { id: 'agent-2', key: OTHER, roles: ['agent'] }] }, mcp: { toolNames: 'canonical' } },
    });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    await untilAsync(async () => gw.app.gw.registry.tools.filter((t) => t.name.endsWith('.sample')).length === 4, 'four sample tools imported', 15_000);
  }, 30_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await gw?.close();
    for (const c of children) c.kill('SIGKILL');
  });

  for (const mode of ['legacy', 'modern'] as const) {
    for (const server of ['s_modern', 's_legacy', 'h_modern', 'h_legacy']) {
      it(`${mode} client, server ${server}: sampling, elicitation and roots reach the client and its answers the server`, async () => {
        const c = await connect(mode, { who: `${mode}-${server}` });
        expect(textOf(await call(c, `${server}.sample`, { text: 'hello' }))).toBe(`sampled: ${mode}-${server} says hi (max 100) (model model-of-${mode}-${server})`);
        expect(textOf(await call(c, `${server}.elicit`, { message: 'your name?' }))).toBe(`accept {"name":"${mode}-${server}"}`);
        expect(textOf(await call(c, `${server}.roots`))).toBe(`file:///roots/${mode}-${server}`);
        const mine = await records((r) => r['backend'] === server && r['caller'] === 'agent-1' && r['outcome'] === 'ok');
        expect(mine.map((r) => r['kind'])).toEqual(expect.arrayContaining(['sampling', 'elicitation', 'roots']));
      });
    }
  }
});
