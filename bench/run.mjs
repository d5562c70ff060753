// npm run bench: every benchmark in one run, one document: docs/benchmarks.md (and stdout).
// Each benchmark is a child process printing markdown; figures within a section are measured side
// by side in that same process, so ratios hold on a noisy 2-core machine.
import { spawnSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';

const only = process.argv.slice(2);
const benches = [
  { name: 'Prefilter quality and speed', args: ['--expose-gc', 'bench/prefilter.mjs', '--out', '-'] },
  { name: 'Hot reload and cold load', args: ['bench/reload.mjs'] },
  { name: 'MCP pool against a direct client and spawn-per-call', args: ['bench/mcp-pool.mjs'] },
  { name: 'HTTP tool overhead: direct, bare Fastify + undici proxy, toolgate', args: ['bench/http-overhead.mjs', '--rounds', '3'] },
  { name: 'Memory: 1,000 tools, 100,000 calls', args: ['bench/memory.mjs'] },
].filter((b) => only.length === 0 || only.some((o) => b.args.join(' ').includes(o)));

const machine = `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
let doc = `# Benchmarks\n\nMeasured ${new Date().toISOString().slice(0, 10)} on ${machine}, by \`npm run bench\`.\n`;
for (const b of benches) {
  process.stderr.write(`bench: ${b.name}…\n`);
  const r = spawnSync(process.execPath, b.args, { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  const body = r.status === 0 ? r.stdout.trim() : `(failed with ${r.status ?? r.signal})\n\n\`\`\`\n${(r.stderr || r.stdout).slice(-2000)}\n\`\`\``;
  doc += `\n## ${b.name}\n\n${body}\n`;
}
mkdirSync('docs', { recursive: true });
writeFileSync('docs/benchmarks.md', doc);
process.stdout.write(doc);
