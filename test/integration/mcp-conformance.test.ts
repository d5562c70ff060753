import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { ensureClients } from '../helpers/clients.js';
import {
  cell, CONFORMANCE_VERSION, expectedFailures, judge, runServerSuite, SPEC_VERSIONS, startConformanceFixture, writeTable,
  type ScenarioResult, type SpecVersion, type SuiteRun,
} from '../helpers/conformance.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';

/**
 * The MCP conformance suite's server scenarios (active and pending), per spec version it covers,
 * twice: straight at the conformance fixture (test/fixtures/mcp/conformance-server.mjs), which
 * must pass them all, and at toolgate's /mcp with that fixture behind it (`prefix: ""`), judged
 * against test/conformance/expected-failures.yml while that file exists: a failure not listed
 * fails, and so does a listed scenario that passes. The table (scenario × era × direct / through
 * toolgate) goes to test-results/conformance/server.{md,json}.
 */
const BASELINE = 'test/conformance/expected-failures.yml';

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

    it(`toolgate's /mcp passes the same scenarios of ${era}, outside the baseline of expected failures`, async () => {
      const run = await runServerSuite(`${gw.url}/mcp`, era);
      through.set(era, run);
      const names = run.results.map((r) => r.scenario);
      expect(names).toEqual(direct.get(era)?.results.map((r) => r.scenario) ?? names);
      // What a gateway has whatever sits behind it, and what the fixture's tools show through it.
      for (const n of ['server-initialize', 'ping', 'tools-list', 'tools-call-simple-text', 'tools-call-with-progress', 'dns-rebinding-protection']) {
        if (names.includes(n)) expect(run.results.find((r) => r.scenario === n)?.ok, `${n}\n${run.output.slice(-3000)}`).toBe(true);
      }
      const { unexpected, stale } = judge(run.results, expectedFailures(BASELINE, 'server'));
      expect(unexpected, `failing, not in ${BASELINE}`).toEqual([]);
      expect(stale, `passing now: delete from ${BASELINE}`).toEqual([]);
    }, 120_000);
  }
});
