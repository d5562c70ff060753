import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ensureClients } from '../helpers/clients.js';
import {
  cell, CONFORMANCE_VERSION, runServerSuite, SPEC_VERSIONS, startConformanceFixture, writeTable,
  type ScenarioResult, type SpecVersion, type SuiteRun,
} from '../helpers/conformance.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';

/**
 * The MCP conformance suite's server scenarios (active and pending), per spec version it covers,
 * twice: straight at the conformance fixture (test/fixtures/mcp/conformance-server.mjs), which
 * must pass them all, and at toolgate's /mcp with that fixture behind it (`prefix: ""`), which
 * must pass them all too: no expected failures. The table (scenario × era × direct / through
 * toolgate) goes to test-results/conformance/server.{md,json}.
 */

describe(`MCP conformance suite ${CONFORMANCE_VERSION}, server scenarios: the fixture directly and behind toolgate's /mcp`, () => {
  let fixture: { url: string; child: ChildProcess };
  let gw: ServerProcess;
  const direct = new Map<SpecVersion, SuiteRun>();
  const through = new Map<SpecVersion, SuiteRun>();

  beforeAll(async () => {
    await ensureClients();
    fixture = await startConformanceFixture();
    gw = await startServerProcess({
      config: { auth: { mode: 'keys', keys: [] } },
      tools: { 'conformance.yaml': { kind: 'mcp-server', name: 'conformance', prefix: '', transport: 'streamable-http', url: fixture.url, prestart: true } },
    });
  }, 600_000);

  afterAll(async () => {
    const rows = [];
    for (const era of SPEC_VERSIONS) {
      const d = direct.get(era)?.results ?? [];
      const t = through.get(era)?.results ?? [];
      const names = [...new Set([...d, ...t].map((r) => r.scenario))];
      const of = (list: ScenarioResult[], n: string) => list.find((r) => r.scenario === n);
      for (const n of names) rows.push({ scenario: n, era, direct: cell(of(d, n)), toolgate: cell(of(t, n)) });
    }
    for (const [era, run] of direct) writeFileSync(`test-results/conformance/server-direct-${era}.log`, run.output);
    for (const [era, run] of through) writeFileSync(`test-results/conformance/server-toolgate-${era}.log`, run.output);
    const ms = [...direct.values(), ...through.values()].map((r) => r.ms);
    writeTable('server', ['direct', 'toolgate'], rows, `@modelcontextprotocol/conformance ${CONFORMANCE_VERSION} server scenarios (--suite all), per --spec-version; runs took ${ms.join(', ')} ms`);
    gw?.child.kill('SIGTERM');
    fixture?.child.kill('SIGTERM');
    await gw?.exited;
  });

  for (const era of SPEC_VERSIONS) {
    it(`the fixture passes every server scenario of ${era}`, async () => {
      const run = await runServerSuite(fixture.url, era);
      direct.set(era, run);
      expect(run.results.length, run.output.slice(-3000)).toBeGreaterThan(era === '2025-06-18' ? 20 : 28);
      expect(run.results.filter((r) => !r.ok).map((r) => r.scenario), run.output.slice(-3000)).toEqual([]);
    }, 120_000);

    it(`toolgate's /mcp passes every server scenario of ${era} too`, async () => {
      const run = await runServerSuite(`${gw.url}/mcp`, era);
      through.set(era, run);
      const names = run.results.map((r) => r.scenario);
      expect(names).toEqual(direct.get(era)?.results.map((r) => r.scenario) ?? names);
      expect(run.results.filter((r) => !r.ok).map((r) => `${r.scenario} (${r.passed} passed, ${r.failed} failed)`), run.output.slice(-3000)).toEqual([]);
    }, 120_000);
  }

  /** The tools a v1 SDK client lists at `url`, by name. */
  const listAt = async (url: string) => {
    const c = new Client({ name: 'conformance-schemas', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(url)));
    const { tools } = await c.listTools();
    return { c, byName: new Map(tools.map((t) => [t.name, t])) };
  };

  it("lists a schema that declares draft 2020-12 unchanged, $schema and $defs included; a draft-07 one without its $schema, validated as 2020-12", async () => {
    const direct = await listAt(fixture.url);
    const via = await listAt(`${gw.url}/mcp`);
    try {
      const d2020 = direct.byName.get('json_schema_2020_12_tool')?.inputSchema;
      expect(d2020).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', $defs: { address: {} } });
      expect(via.byName.get('json_schema_2020_12_tool')?.inputSchema).toEqual(d2020);
      const { $schema, ...draft07 } = (direct.byName.get('json_schema_draft07_tool')?.inputSchema ?? {}) as Record<string, unknown>;
      expect($schema).toBe('http://json-schema.org/draft-07/schema#');
      expect(via.byName.get('json_schema_draft07_tool')?.inputSchema).toEqual(draft07);
      // toolgate enforces what it lists: the draft-07 $ref into `definitions` resolves, bad arguments never reach the server.
      const ok = await via.c.callTool({ name: 'json_schema_draft07_tool', arguments: { count: 2 } });
      expect(JSON.stringify(ok.content)).toContain('draft-07 tool called with: {\\"count\\":2}');
      const bad = await via.c.callTool({ name: 'json_schema_draft07_tool', arguments: { count: 0 } }).catch((e: Error) => ({ isError: true, content: [{ type: 'text', text: e.message }] }));
      expect(bad.isError).toBe(true);
      expect(JSON.stringify(bad.content)).not.toContain('draft-07 tool called');
      const bad2020 = await via.c.callTool({ name: 'json_schema_2020_12_tool', arguments: { name: 'x', extra: 1 } }).catch((e: Error) => ({ isError: true, content: [{ type: 'text', text: e.message }] }));
      expect(bad2020.isError).toBe(true);
      expect(JSON.stringify(bad2020.content)).not.toContain('2020-12 tool called');
    } finally {
      await direct.c.close();
      await via.c.close();
    }
  }, 60_000);
});
