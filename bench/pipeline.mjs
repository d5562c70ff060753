#!/usr/bin/env node
// The call pipeline's own CPU cost, without sockets: `gw.pipeline.call` on a builtin `echo` tool
// (auth already resolved, arguments validated, routing, breaker, deadline, result shaping, response
// hash, audit to a file, metrics), --loops concurrent loops in this process. The figure a noisy
// 2-core machine disturbs least (no other process in the measured path): use it to judge a hot-path
// change, the HTTP bench to judge the whole. With --ablate audit,metrics,breaker those stages are
// stubbed out (their share of the cost). The loops never wait on I/O, so the audit's 25 ms flush
// timer runs rarely and its batches are larger than a server's: the audit share is overstated.
//
//   npm run build && node bench/pipeline.mjs [--loops 16] [--calls 4000] [--rounds 5] [--ablate audit,metrics,breaker]
//
// Prints a markdown table and one JSON line for baselines.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchEchoTool, requireDist, root } from './lib/gateway.mjs';
import { flag } from './lib/args.mjs';

const loops = Number(flag('--loops', '16'));
const calls = Number(flag('--calls', '4000'));
const rounds = Number(flag('--rounds', '5'));
const ablate = new Set(flag('--ablate', '').split(',').filter(Boolean));
requireDist();
const dist = (p) => import(pathToFileURL(join(root, 'dist', p)).href);

if (ablate.has('audit')) (await dist('audit/file-sink.js')).FileAuditSink.prototype.write = () => undefined;
if (ablate.has('metrics')) (await dist('metrics/index.js')).GatewayMetrics.prototype.callEnded = () => undefined;
if (ablate.has('breaker')) (await dist('resilience/health.js')).HealthBook.prototype.run = (_t, _b, attempt) => attempt.tryOnce();

const dir = mkdtempSync(join(tmpdir(), 'toolgate-pipeline-'));
mkdirSync(join(dir, 'tools.d'));
writeFileSync(join(dir, 'tools.d', 'echo.yaml'), benchEchoTool('Bench tool.', '  - id: b\n    builtin: echo\n'));
writeFileSync(join(dir, 'gateway.yaml'), `audit:\n  file: "${join(dir, 'audit.jsonl')}"\ntools:\n  dir: "${join(dir, 'tools.d')}"\n  watch: false\n`);
const { loadConfig } = await dist('config/load.js');
const { Gateway } = await dist('gateway.js');
const gw = new Gateway({ loaded: loadConfig({ env: { TOOLGATE_CONFIG: join(dir, 'gateway.yaml') } }), env: {} });
await gw.start();
const caller = { id: 'bench', roles: new Set(['agent']), toolPatterns: [/^.*$/] };
let n = 0;
async function loop(count) {
  for (let i = 0; i < count; i++) {
    const out = await gw.pipeline.call({ toolName: 'bench.echo', args: { message: 'hello', count: 3 }, caller, requestId: `r${n++}`, headers: {} });
    if (out.status !== 'ok') throw new Error(`unexpected ${out.status}`);
  }
}
const run = () => Promise.all(Array.from({ length: loops }, () => loop(calls)));
await run(); // warm-up: compile, fill the breaker and metric entries
const perCall = [];
for (let r = 0; r < rounds; r++) {
  const c0 = process.cpuUsage();
  await run();
  const c = process.cpuUsage(c0);
  perCall.push((c.user + c.system) / (loops * calls));
}
await gw.close();
rmSync(dir, { recursive: true, force: true });
const sorted = [...perCall].sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)];
const label = ablate.size ? `without ${[...ablate].join(', ')}` : 'full pipeline';
console.log(`| pipeline | CPU per call, median of ${rounds} | min | max |`);
console.log('| --- | --- | --- | --- |');
console.log(`| ${label} | ${median.toFixed(1)} µs | ${sorted[0].toFixed(1)} µs | ${sorted.at(-1).toFixed(1)} µs |`);
console.log(`\n${loops} concurrent loops × ${calls} calls per round on a builtin \`echo\` tool, in one process (no sockets), audit to a file; user + system CPU of the process (GC and libuv threads included) per call.`);
console.log(JSON.stringify({ bench: 'pipeline', loops, calls, rounds, ablate: [...ablate], perCallUs: perCall }));
process.exit(0);
