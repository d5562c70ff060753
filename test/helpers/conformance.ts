import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { clientFile, NODE22 } from './clients.js';

/**
 * The MCP conformance suite (@modelcontextprotocol/conformance, the version test/clients pins,
 * which needs Node ≥ 22: run by test/clients' Node 22) as a child process, and its results per
 * scenario, read from the summary it prints (`✓ name: 2 passed, 0 failed`).
 */
export const CONFORMANCE_BIN = clientFile('@modelcontextprotocol/conformance/dist/index.js');
export const CONFORMANCE_VERSION = (JSON.parse(readFileSync(clientFile('@modelcontextprotocol/conformance/package.json'), 'utf8')) as { version: string }).version;
/** The spec versions its scenarios are tagged with (`conformance list`); `--spec-version` selects by them. */
export const SPEC_VERSIONS = ['2025-06-18', '2025-11-25'] as const;
export type SpecVersion = (typeof SPEC_VERSIONS)[number];

export interface ScenarioResult {
  scenario: string;
  passed: number;
  failed: number;
  ok: boolean;
}

export interface SuiteRun {
  results: ScenarioResult[];
  code: number | null;
  ms: number;
  output: string;
}

/** Reads `✓ tools-list: 1 passed, 0 failed` lines (the suite's summary) into results. */
export function parseSummary(output: string): ScenarioResult[] {
  const out: ScenarioResult[] = [];
  for (const m of output.matchAll(/^([✓✗]) ([\w/.-]+): (\d+) passed, (\d+) failed/gmu)) {
    out.push({ scenario: m[2]!, passed: Number(m[3]), failed: Number(m[4]), ok: m[1] === '✓' && m[4] === '0' });
  }
  return out;
}

/** Runs `conformance <args>` (asynchronously: the gateway under test may live in this process). */
export function runSuite(args: string[], o: { timeoutMs?: number; env?: Record<string, string> } = {}): Promise<SuiteRun> {
  const t0 = Date.now();
  const child = spawn(NODE22, [CONFORMANCE_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...o.env } });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 110_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ results: parseSummary(output), code, ms: Date.now() - t0, output });
    });
  });
}

/** Every server scenario (active and pending) of one spec version against `url`. */
export function runServerSuite(url: string, spec: SpecVersion): Promise<SuiteRun> {
  return runSuite(['server', '--url', url, '--suite', 'all', '--spec-version', spec]);
}

const FIXTURE = fileURLToPath(new URL('../fixtures/mcp/conformance-server.mjs', import.meta.url));

/** The conformance fixture server over streamable HTTP on a free port; resolves with its /mcp URL. */
export function startConformanceFixture(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [FIXTURE, '--transport', 'http', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the conformance fixture did not start:\n${out}`)), 15_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1]!, child });
      }
    });
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => reject(new Error(`the conformance fixture exited ${code}:\n${out}`)));
  });
}

/** Where the tables and the suite's outputs go (made on load). */
export const CONFORMANCE_RESULTS = 'test-results/conformance';
mkdirSync(CONFORMANCE_RESULTS, { recursive: true });

export interface TableRow {
  scenario: string;
  era: string;
  [column: string]: string;
}

/** Writes the table as Markdown and JSON to test-results/conformance/<name>.{md,json}; returns the Markdown. */
export function writeTable(name: string, columns: string[], rows: TableRow[], note: string): string {
  const dir = CONFORMANCE_RESULTS;
  const head = ['scenario', 'era', ...columns];
  const md = [
    `# ${note}`,
    '',
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${head.map((h) => r[h] ?? '').join(' | ')} |`),
    '',
  ].join('\n');
  writeFileSync(join(dir, `${name}.md`), md);
  writeFileSync(join(dir, `${name}.json`), JSON.stringify({ note, columns: head, rows }, null, 2));
  return md;
}

/** A cell: `pass`, `FAIL (1/2)` (checks failed of all), or `-` (not run in that era). */
export function cell(r: ScenarioResult | undefined): string {
  if (!r) return '-';
  return r.ok ? 'pass' : `FAIL (${r.failed}/${r.passed + r.failed})`;
}

/** The suite's client scenarios (`conformance list`, the section after "Client scenarios"). */
export async function listClientScenarios(): Promise<string[]> {
  const { output } = await runSuite(['list'], { timeoutMs: 60_000 });
  const section = output.split(/^Client scenarios/m)[1] ?? '';
  return [...section.matchAll(/^\s+- ([\w/.-]+) \[/gm)].map((m) => m[1]!);
}

/** The driver that plays the suite's client through toolgate's pool (test/clients/drivers/conformance-toolgate.mjs). */
export const TOOLGATE_CLIENT_DRIVER = fileURLToPath(new URL('../clients/drivers/conformance-toolgate.mjs', import.meta.url));

export interface ClientRun extends SuiteRun {
  /** Checks passed and failed (`Passed: 3/3, 0 failed`); ok: all passed and the client exited 0. */
  passed: number;
  failed: number;
  ok: boolean;
}

/** One client scenario with the driver as the client (`--command`, run by this process's Node, which toolgate needs). */
export async function runClientScenario(scenario: string): Promise<ClientRun> {
  const out = join(CONFORMANCE_RESULTS, 'client-runs');
  const run = await runSuite(['client', '--command', `${process.execPath} ${TOOLGATE_CLIENT_DRIVER}`, '--scenario', scenario, '--timeout', '100000', '-o', out], { timeoutMs: 150_000 });
  const m = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(run.output);
  const passed = Number(m?.[1] ?? 0);
  const failed = Number(m?.[3] ?? 1);
  const ok = m !== null && failed === 0 && passed > 0 && /OVERALL: PASSED/.test(run.output) && !/CLIENT EXITED WITH ERROR/.test(run.output);
  return { ...run, passed, failed, ok };
}
