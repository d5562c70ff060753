import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/app.js';
import { clientFile, ensureClients, runDriver, type DriverJob, type DriverOptions, type DriverReport } from '../helpers/clients.js';
import {
  ALL_TOOLS,
  KEYS,
  expectDeclined,
  expectEchoed,
  expectElicitedAndRan,
  expectPendingThenApproved,
  expectRefusedKey,
  ok,
  resultOf,
  startClientGateway,
} from '../helpers/client-gateway.js';

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

  const title = (c: Case) =>
    `${c.client} over ${c.transport === 'http' ? '/mcp (Streamable HTTP)' : '/sse (legacy SSE)'}: lists, calls, and a gated call ${c.elicits ? 'approved by its user through elicitation' : 'left pending, then approved over REST'}`;

  /** One client's session as a user notices it; resolves with the report of the key that sees everything. */
  async function exercise(c: Case, tag: string): Promise<DriverReport> {
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
    return agent;
  }

  for (const c of CASES) {
    it(title(c), async () => {
      await exercise(c, `${c.client.replace(/\W+/g, '-')}-${c.transport}`);
    }, 60_000);
  }

  // Over /mcp, the clients whose user answers elicitation, declining: the call is rejected, not run.
  for (const c of CASES.filter((x) => x.elicits && x.transport === 'http')) {
    it(`${c.client} over /mcp: its user declines the gated call; the client gets an error result and the tool never runs`, async () => {
      const del = { path: `/files/declined-${c.client.replace(/\W+/g, '-')}` };
      const job: DriverJob = { url: url('http'), key: KEYS.agent, transport: 'http', calls: [{ name: 'files.delete', arguments: del }], elicit: 'decline' };
      const report = ok(await runDriver(c.driver, job, c.opts()));
      await expectDeclined(gw, report, resultOf(report, 0), del);
    }, 60_000);
  }

  // A key the gateway does not know: the client fails to connect and shows the gateway's own words.
  // (mcp-remote is left out: on a 401 it starts an OAuth login in a browser.)
  for (const c of CASES.filter((x) => x.transport === 'http' && x.driver !== 'mcp-remote')) {
    it(`${c.client} over /mcp with an unknown key: refused, with the gateway's 401 message`, async () => {
      const report = await runDriver(c.driver, { url: url('http'), key: 'not-a-key-of-this-gateway', transport: 'http', calls: [] }, c.opts());
      expectRefusedKey(report);
    }, 60_000);
  }

  // FAILS ON MAIN until /mcp speaks the 2026-07-28 era (issue 22, item 2). The AI SDK 2.x client
  // probes with server/discover (1 s at most) and takes 2026-07-28 when offered, falling back to
  // initialize only on a probe that fails without a Modern error code (-32020..-32022 end it): once
  // the face speaks Modern, the same session must land on 2026-07-28, its gated call approved
  // through the multi-round-trip input request, everything else unchanged.
  describe('needs /mcp to speak MCP 2026-07-28 (Modern era)', () => {
    const modern = CASES[0]!;
    it(`${title(modern)}, on 2026-07-28 (server/discover)`, async () => {
      const agent = await exercise(modern, 'ai-sdk-v2-modern');
      expect(agent.protocolVersion).toBe('2026-07-28');
    }, 60_000);
  });
});
