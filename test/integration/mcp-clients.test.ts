import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/app.js';
import { clientFile, ensureClients, runDriver, type DriverJob, type DriverOptions } from '../helpers/clients.js';
import { ALL_TOOLS, KEYS, expectEchoed, expectElicitedAndRan, expectPendingThenApproved, ok, resultOf, startClientGateway } from '../helpers/client-gateway.js';

interface Case {
  client: string;
  driver: string;
  opts: () => DriverOptions;
  transport: 'http' | 'sse';
  /** The client answers elicitation (the gated `files.*` call is then approved by its user). */
  elicits: boolean;
}

const both = (c: Omit<Case, 'transport'>): Case[] => [
  { ...c, transport: 'http' },
  { ...c, transport: 'sse' },
];

/** Real MCP clients from npm (test/clients) against a listening gateway's /mcp and /sse, as their users run them. */
const CASES: Case[] = [
  // @ai-sdk/mcp 2.x asks for Node ≥ 22: it runs under the Node 22 binary from test/clients
  ...both({ client: '@ai-sdk/mcp 2.x createMCPClient', driver: 'ai-sdk', opts: () => ({ node: 'node22' }), elicits: true }),
  ...both({ client: '@ai-sdk/mcp 1.x createMCPClient', driver: 'ai-sdk', opts: () => ({ node: 'current', args: ['v1'] }), elicits: true }),
  ...both({ client: '@langchain/mcp-adapters MultiServerMCPClient', driver: 'langchain', opts: () => ({ node: 'current', args: ['multi'] }), elicits: false }),
  ...both({ client: '@langchain/mcp-adapters loadMcpTools', driver: 'langchain', opts: () => ({ node: 'current', args: ['load'] }), elicits: false }),
  ...both({ client: 'mcp-remote over stdio', driver: 'mcp-remote', opts: () => ({ node: 'current', args: [clientFile('mcp-remote/dist/proxy.js')] }), elicits: true }),
];

describe('third-party MCP clients against /mcp and /sse', () => {
  let gw: TestGateway;
  let base: string;

  beforeAll(async () => {
    await ensureClients();
    ({ gw, base } = await startClientGateway());
  }, 11 * 60_000);
  afterAll(async () => {
    await gw?.close();
  });

  const url = (t: Case['transport']) => `${base}${t === 'http' ? '/mcp' : '/sse'}`;

  for (const c of CASES) {
    const tag = `${c.driver}${c.opts().args?.[0]?.startsWith('/') ? '' : `-${c.opts().args?.[0] ?? ''}`}-${c.transport}-${c.opts().node}`;
    it(`${c.client} over ${c.transport === 'http' ? '/mcp (Streamable HTTP)' : '/sse (legacy SSE)'}: lists, calls, and a gated call ${c.elicits ? 'approved by its user through elicitation' : 'left pending, then approved over REST'}`, async () => {
      const message = `hello from ${tag}`;
      const wipe = { path: `/vol/${tag}` };
      const del = { path: `/files/${tag}` };
      const job: DriverJob = {
        url: url(c.transport),
        key: KEYS.agent,
        transport: c.transport,
        calls: [
          { name: 'debug.echo', arguments: { message } },
          { name: 'ops.wipe', arguments: wipe },
          { name: 'files.delete', arguments: del },
        ],
        ...(c.elicits ? { elicit: 'accept' as const } : {}),
      };
      const [agent, limited] = await Promise.all([
        runDriver(c.driver, job, c.opts()).then(ok),
        runDriver(c.driver, { ...job, key: KEYS.limited, calls: [{ name: 'debug.echo', arguments: { message: `${message} (limited)` } }] }, c.opts()).then(ok),
      ]);

      expect([...agent.tools].sort()).toEqual(ALL_TOOLS);
      await expectEchoed(gw, resultOf(agent, 0), message);
      // ops.* may not be approved through elicitation: pending, named in the result, decided over REST
      await expectPendingThenApproved(gw, resultOf(agent, 1), 'ops.wipe', wipe);
      if (c.elicits) await expectElicitedAndRan(gw, agent, resultOf(agent, 2), del);
      else await expectPendingThenApproved(gw, resultOf(agent, 2), 'files.delete', del);

      // the key that may see only debug.* is shown only that, and its call works
      expect(limited.tools).toEqual(['debug.echo']);
      expect(JSON.parse(resultOf(limited, 0).text)).toEqual({ message: `${message} (limited)` });
    });
  }
});
