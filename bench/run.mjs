// npm run bench: every benchmark in one run; each one's output replaces its own block of docs/benchmarks.md (and goes to stdout).
// Each benchmark is a child process printing markdown; figures within a section are measured side
// by side in that same process, so ratios hold on a noisy 2-core machine.
import { spawnSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { summaryTable } from './lib/summary.mjs';

// `node bench/run.mjs [names…] [-- extra args]`: the extra args go to every bench run (e.g. `mcp-pool -- --baseline ../old`).
const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const only = dash >= 0 ? argv.slice(0, dash) : argv;
const extra = dash >= 0 ? argv.slice(dash + 1) : [];
const benches = [
  { name: 'Prefilter quality and speed', args: ['--expose-gc', 'bench/prefilter.mjs', '--out', '-'] },
  { name: 'Hot reload and cold load', args: ['bench/reload.mjs'] },
  { name: 'OpenAPI import: large real documents', args: ['bench/openapi-import.mjs'] },
  { name: 'MCP pool against a direct client and spawn-per-call', args: ['bench/mcp-pool.mjs', '--calls', '1000'] },
  { name: 'Pipeline CPU per call, in process', args: ['bench/pipeline.mjs'] },
  { name: 'HTTP tool overhead: direct, bare Fastify + undici proxy, toolgate', args: ['bench/http-overhead.mjs'] },
  { name: 'Memory: 1,000 tools, 100,000 calls', args: ['bench/memory.mjs'] },
  { name: 'Against the peers: MCP proxies fronting server-everything', args: ['bench/peers.mjs'] },
  { name: 'SQL guard: the cost of one readOnlySql check', args: ['bench/sql-guard.mjs'] },
  { name: 'Identity: a JWT-authenticated call against an API-key call', args: ['bench/oidc-auth.mjs'] },
  { name: 'Result guards: CPU per KB of result', args: ['bench/result-guards.mjs'] },
  { name: 'MCP sessions at scale: 10,000 sessions, 2,000 GET streams', args: ['bench/mcp-sessions.mjs'] },
  { name: 'A hundred MCP servers in tools.d', args: ['bench/mcp-hundred.mjs'] },
  { name: 'Redis mode (bench/redis-mode.mjs)', args: ['bench/redis-mode.mjs'] },
].filter((b) => only.length === 0 || only.some((o) => b.args.join(' ').includes(o)));

const machine = `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
const file = 'docs/benchmarks.md';
// The document is curated (headings, notes, earlier runs); each bench owns only the block between
// its markers, <!-- bench:<id> --> and <!-- /bench:<id> -->, which a run replaces. A bench without
// markers yet gets a new section at the end. The file is read again before each write, so edits
// made while a long bench runs are kept. Last, the summary block (after the introduction) is rebuilt
// from the JSON line of every block: the one table of every target.
mkdirSync('docs', { recursive: true });
const readDoc = () => (existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n');

/** Replaces the block `id` of the document, or adds it (as a new section, or before `beforeHeading`). */
function writeBlock(id, block, heading, beforeHeading) {
  const open = `<!-- bench:${id} -->`;
  const close = `<!-- /bench:${id} -->`;
  const doc = readDoc();
  const at = doc.indexOf(open);
  const end = doc.indexOf(close);
  if (at >= 0 && end > at) return writeFileSync(file, doc.slice(0, at) + block + doc.slice(end + close.length));
  const before = beforeHeading ? doc.indexOf(beforeHeading) : -1;
  const section = `## ${heading}\n\n${block}\n`;
  writeFileSync(file, before >= 0 ? `${doc.slice(0, before)}\n${section}${doc.slice(before)}` : `${doc.trimEnd()}\n\n${section}`);
}

for (const b of benches) {
  const bench = b.args.find((a) => a.startsWith('bench/')).replace(/^bench\/|\.mjs$/g, '');
  // The peers bench against another checkout (--baseline) is its own block: it must not replace the full peers table.
  const id = bench === 'peers' && extra.includes('--baseline') ? 'peers-baseline' : bench;
  process.stderr.write(`bench: ${b.name}…\n`);
  const startLoad = loadavg()[0];
  const r = spawnSync(process.execPath, [...b.args, ...extra], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  const body = r.status === 0 ? r.stdout.trim() : `(failed with ${r.status ?? r.signal})\n\n\`\`\`\n${(r.stderr || r.stdout).slice(-2000)}\n\`\`\``;
  const block = `<!-- bench:${id} -->\nMeasured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machine} (load average ${startLoad.toFixed(1)} at the start).\n\n${body}\n<!-- /bench:${id} -->`;
  writeBlock(id, block, b.name);
  process.stdout.write(`\n## ${b.name}\n\n${block}\n`);
}

// The one table: every target with its latest figure, from all the blocks (this run's and earlier ones).
const summary = summaryTable(readDoc());
writeBlock('summary', `<!-- bench:summary -->\n${summary}\n<!-- /bench:summary -->`, 'Summary', '\n## ');
process.stdout.write(`\n## Summary\n\n${summary}\n`);
