import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport, type ClientCapabilities } from '@modelcontextprotocol/client';

/** The v2-SDK fixture whose tools ask their client (sampling, elicitation, roots). */
export const ASKING = fileURLToPath(new URL('../fixtures/mcp/asking-server.mjs', import.meta.url));
export const MODERN = '2026-07-28';

export type Mode = 'legacy' | 'modern';
type Text = { type: string; text?: string };
export const textOf = (r: Record<string, unknown>) => ((r['content'] ?? []) as Text[]).map((b) => b.text ?? '').join('\n');

/** Starts the fixture over Streamable HTTP and resolves with its port once it listens. */
export async function startAskingHttp(era: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [ASKING, '--era', era, '--transport', 'http', '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
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

export interface AskedClient {
  /** Names itself in every answer (sampling text and model, elicitation content, root URI). */
  who?: string;
  capabilities?: ClientCapabilities;
  /** Replaces the default sampling answer; `progress` reports progress on the request being answered. */
  onSampling?: (params: Record<string, unknown>, signal: AbortSignal, progress: (n: number) => Promise<void>) => Promise<Record<string, unknown>>;
  /** What the client was asked: `sampling <prompt>` / `elicitation <message>` / `roots`. */
  seen?: string[];
}

/** The v2 SDK client on toolgate's /mcp (a 2025-11-25 session, or pinned to 2026-07-28) answering the servers' requests. */
export async function askedClient(base: string, key: string, mode: Mode, h: AskedClient = {}): Promise<Client> {
  const capabilities = h.capabilities ?? { sampling: {}, elicitation: { form: {} }, roots: {} };
  const client = new Client({ name: 'relay-test', version: '1.0.0' }, { capabilities, ...(mode === 'modern' ? { versionNegotiation: { mode: { pin: MODERN } } } : {}) });
  const who = h.who ?? 'client';
  if (capabilities.sampling) {
    client.setRequestHandler('sampling/createMessage', async (req, ctx) => {
      const params = req.params as unknown as Record<string, unknown>;
      h.seen?.push(`sampling ${(params['messages'] as { content: { text?: string } }[])[0]?.content.text ?? ''}`);
      const token = (params['_meta'] as Record<string, unknown> | undefined)?.['progressToken'];
      const progress = async (n: number) => {
        if (token !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token as string, progress: n } });
      };
      if (h.onSampling) return (await h.onSampling(params, ctx.mcpReq.signal, progress)) as never;
      return { role: 'assistant', model: `model-of-${who}`, content: { type: 'text', text: `${who} says hi (max ${String(params['maxTokens'])})` } };
    });
  }
  if (capabilities.elicitation) {
    client.setRequestHandler('elicitation/create', async (req) => {
      h.seen?.push(`elicitation ${req.params.message}`);
      return { action: 'accept', content: { name: who } };
    });
  }
  if (capabilities.roots) {
    client.setRequestHandler('roots/list', async () => {
      h.seen?.push('roots');
      return { roots: [{ uri: `file:///roots/${who}`, name: who }] };
    });
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

export const callTool = async (c: Client, name: string, args: Record<string, unknown> = {}, signal?: AbortSignal) =>
  (await c.callTool({ name, arguments: args }, signal ? { signal } : undefined)) as Record<string, unknown>;

/** Clients opened by a test file on one gateway, closed together in afterAll. */
export function askedClients(base: () => string, defaultKey: string) {
  const open: Client[] = [];
  return {
    connect: async (mode: Mode, h: AskedClient = {}, key = defaultKey) => {
      const c = await askedClient(base(), key, mode, h);
      open.push(c);
      return c;
    },
    closeAll: () => Promise.all(open.map((c) => c.close().catch(() => undefined))),
  };
}

type AuditRecord = Record<string, unknown>;
/** The gateway's `server_request` audit records that match `pred`. */
export const serverRequestRecords = async (gw: { audit(): Promise<AuditRecord[]> }, pred: (r: AuditRecord) => boolean) =>
  (await gw.audit()).filter((r) => r['event'] === 'server_request' && pred(r));
