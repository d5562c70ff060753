import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoTool, startGateway, type TestGateway } from '../helpers/app.js';
import { clientFile, ensureClients, runDriver, type DriverReport } from '../helpers/clients.js';

/**
 * Issue 29's agent stack, end to end without network: /mcp's tools/list through the AI SDK's MCP
 * client (`@ai-sdk/mcp`) into generateText with the OpenAI and the Anthropic provider, whose
 * `fetch` captures the request body (test/clients/drivers/ai-sdk-providers.mjs). The names in
 * those bodies must be what the APIs accept:
 * - OpenAI: `FunctionDefinition.name` in the `openai` package's published types: "Must be a-z,
 *   A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64" (read below from
 *   the installed package, so a change there shows).
 * - Anthropic: tool `name` must match `^[a-zA-Z0-9_-]{1,64}$` (Anthropic's tool-use docs, "Specifying
 *   client tools"; `@anthropic-ai/sdk`'s `Tool.name` is typed `string` without the pattern).
 */
const OPENAI_RULE = 'Must be a-z, A-Z, 0-9, or contain\n     * underscores and dashes, with a maximum length of 64.';
const OPENAI_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const ANTHROPIC_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const KEY = 'providers-agent-key-0001';
const LONG = `${'x'.repeat(30)}.${'y'.repeat(40)}`;
const tools = { 'echo.yaml': echoTool('debug.echo'), 'list.yaml': echoTool('files.list-all'), 'long.yaml': echoTool(LONG) };
const config = (toolNames?: 'canonical') => ({ auth: { keys: [{ id: 'agent-1', key: KEY, roles: ['agent'] }] }, ...(toolNames ? { mcp: { toolNames } } : {}) });

async function listening(toolNames?: 'canonical'): Promise<{ gw: TestGateway; url: string }> {
  const gw = await startGateway({ config: config(toolNames), tools });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  return { gw, url: `http://127.0.0.1:${(gw.app.server.address() as { port: number }).port}/mcp` };
}

/** @ai-sdk/mcp 2.x asks for Node ≥ 22: the driver runs under test/clients' Node 22. */
const drive = (url: string) => runDriver('ai-sdk-providers', { url, key: KEY, transport: 'http', calls: [], arguments: { message: 'from the model' } }, { node: 'node22' });

const namesIn = (r: DriverReport) => ({
  openai: (r.requests?.openai.tools ?? []).map((t) => t.function?.name ?? ''),
  anthropic: (r.requests?.anthropic.tools ?? []).map((t) => t.name ?? ''),
});

describe('/mcp tools through the AI SDK into OpenAI and Anthropic requests', () => {
  beforeAll(async () => {
    await ensureClients();
  }, 11 * 60_000);

  it('the openai package still publishes the name rule this test checks', () => {
    expect(readFileSync(clientFile('openai/resources/shared.d.ts'), 'utf8')).toContain(OPENAI_RULE);
  });

  describe('default (mcp.toolNames: provider)', () => {
    let gw: TestGateway;
    let url: string;
    beforeAll(async () => void ({ gw, url } = await listening()));
    afterAll(async () => gw?.close());

    it('every tool name in both request bodies is one the provider accepts, and the model’s call runs through /mcp', async () => {
      const report = await drive(url);
      expect(report.error, report.error).toBeUndefined();
      const names = namesIn(report);
      expect(names.openai.sort()).toEqual(['debug__echo', 'files__list-all', expect.stringMatching(/^x{30}__y{23}_[0-9a-f]{8}$/)]);
      expect(names.anthropic.sort()).toEqual(names.openai);
      for (const n of names.openai) expect(n).toMatch(OPENAI_NAME);
      for (const n of names.anthropic) expect(n).toMatch(ANTHROPIC_NAME);
      // The canned completions call the first tool by the name they were shown; the AI SDK sends that call to /mcp.
      expect(report.results).toEqual([
        { name: 'openai:debug__echo', text: JSON.stringify({ message: 'from the model' }), isError: false },
        { name: 'anthropic:debug__echo', text: JSON.stringify({ message: 'from the model' }), isError: false },
      ]);
      const calls = (await gw.audit()).filter((r) => r['event'] === 'call' && r['outcome'] === 'ok');
      expect(calls.map((r) => r['tool'])).toEqual(['debug.echo', 'debug.echo']);
    }, 90_000);
  });

  describe('mcp.toolNames: canonical', () => {
    let gw: TestGateway;
    let url: string;
    beforeAll(async () => void ({ gw, url } = await listening('canonical')));
    afterAll(async () => gw?.close());

    it('the dotted names reach the request bodies, where both providers would refuse them', async () => {
      const report = await drive(url);
      expect(report.error, report.error).toBeUndefined();
      const names = namesIn(report);
      expect(names.openai).toContain('debug.echo');
      expect(names.anthropic).toContain(LONG);
      expect(names.openai.filter((n) => !OPENAI_NAME.test(n)).sort()).toEqual(['debug.echo', 'files.list-all', LONG].sort());
      expect(names.anthropic.filter((n) => !ANTHROPIC_NAME.test(n)).sort()).toEqual(['debug.echo', 'files.list-all', LONG].sort());
    }, 90_000);
  });
});
