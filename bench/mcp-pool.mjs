#!/usr/bin/env node
// Latency of one MCP `echo` call (server-everything over stdio), measured in one run:
//   pool    - through McpPool (one long-lived child, shared session)
//   direct  - a bare SDK Client on one long-lived StdioClientTransport session
//   spawn   - a new server process + handshake per call (what a pool avoids)
//
//   baseline - with --baseline DIR: McpPool of another checkout (DIR/dist, e.g. the commit before a change)
//   also     - with --also DIR: one more build, measured the same way (e.g. the build before a fix, judged
//              against the baseline in the same run as the fix)
//
//   npx tsc -p tsconfig.json && node bench/mcp-pool.mjs [--calls 200] [--spawns 10] [--cycles 10] [--warmup 1000] [--dist DIR] [--baseline DIR] [--also DIR] [--same-process]
//
// Calls are sequential (latency, not throughput); the first --warmup (1000) of each warm session
// are not counted: with 20, as before, the JIT had not yet optimized the call path, and the v2
// client's larger one came out 1.10–1.24× the 1.x pool, against 1.02–1.09× after 1000 (issue 22,
// docs/benchmarks.md). The long-lived targets (pool, baseline, direct) are all open at once, each
// in a process of its own (bench/lib/pool-target.mjs, which times the calls: no two pools share a
// heap, a collector or the JIT's state, as no two gateways do), and visited in --cycles blocks of
// calls / cycles each, in turn (the order rotated every cycle), so this machine's slow and fast
// phases fall on all of them alike; the pool / baseline ratio is the median of the cycles' own
// ratios of block medians. --same-process: all targets in this process, as before.
// Prints medians and p90 in ms, and one JSON line.
import { execFileSync, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { flag } from './lib/args.mjs';
import { echoArgs, openTarget, serverParamsFor } from './lib/pool-open.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const calls = Number(flag('--calls', '200'));
const spawns = Number(flag('--spawns', '10'));
const distDir = resolve(flag('--dist', `${root}dist`));
const baselineDir = flag('--baseline', '') && resolve(flag('--baseline', ''));
const alsoDir = flag('--also', '') && resolve(flag('--also', ''));
const cycles = Math.max(1, Number(flag('--cycles', '10')));
const WARMUP = Number(flag('--warmup', '1000'));
const sameProcess = process.argv.includes('--same-process');

for (const dir of [distDir, ...(baselineDir ? [`${baselineDir}/dist`] : []), ...(alsoDir ? [`${alsoDir}/dist`] : [])]) {
  if (!existsSync(`${dir}/mcp/pool.js`)) {
    console.error(`No compiled pool at ${dir}/mcp/pool.js: run \`npx tsc -p tsconfig.json\` first${dir === distDir ? '' : ' in the baseline checkout'}.`);
    process.exit(2);
  }
}
const commitOf = (dir) => execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
const baselineCommit = baselineDir ? commitOf(baselineDir) : undefined;
const alsoCommit = alsoDir ? commitOf(alsoDir) : undefined;

const EVERYTHING = `${root}node_modules/@modelcontextprotocol/server-everything/dist/index.js`;
const serverParams = serverParamsFor(EVERYTHING);

async function timed(n, fn) {
  const samples = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(i);
    samples.push(performance.now() - t0);
  }
  return samples;
}

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { n: sorted.length, median: round(at(0.5)), p90: round(at(0.9)) };
}
const round = (x) => Math.round(x * 1000) / 1000;
const median = (xs) => stats(xs).median;

/** A target in a process of its own: call(i) is not offered, block(n, from) resolves to n latencies (ms). */
const children = [];
// a run that fails leaves no target behind
process.on('exit', () => children.forEach((c) => c.exitCode === null && c.kill()));
function openChild(kind, dist) {
  const child = fork(`${root}bench/lib/pool-target.mjs`, [kind, dist ?? '', EVERYTHING], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.push(child);
  let waiting;
  child.on('message', (m) => waiting?.resolve(m));
  const next = () => new Promise((resolve, reject) => (waiting = { resolve, reject }));
  // a target that dies (e.g. a build that fails to load) ends the run instead of hanging it
  child.once('exit', (code) => code && waiting?.reject(new Error(`${kind} target (${dist || 'direct'}) exited with ${code}`)));
  return next().then(() => ({
    block: (n, from) => {
      const p = next();
      child.send({ n, from });
      return p.then((m) => m.samples);
    },
    close: () => new Promise((resolve) => {
      child.once('exit', resolve);
      child.send({ close: true });
    }),
  }));
}

/** The same target in this process (--same-process). */
async function openHere(kind, dist) {
  const { call, close } = await openTarget(kind, dist, EVERYTHING);
  return { block: (n, from) => timed(n, (i) => call(from + i)), close };
}

const open = sameProcess ? openHere : openChild;
// the long-lived targets: pool, baseline pool, direct SDK client (one session)
const targets = [['pool', await open('pool', distDir)]];
if (baselineDir) targets.push(['baseline', await open('pool', `${baselineDir}/dist`)]);
if (alsoDir) targets.push(['also', await open('pool', `${alsoDir}/dist`)]);
targets.push(['direct', await open('direct')]);

const samples = new Map(targets.map(([name]) => [name, []]));
const blockMedians = new Map(targets.map(([name]) => [name, []]));
for (const [, t] of targets) await t.block(WARMUP, 0);
const per = Math.ceil(calls / cycles);
for (let c = 0; c < cycles; c++) {
  const k = c % targets.length;
  // rotated every cycle: each target takes every place and follows every other one alike
  for (const [name, t] of [...targets.slice(k), ...targets.slice(0, k)]) {
    const block = await t.block(per, WARMUP + c * per);
    samples.get(name).push(...block);
    blockMedians.get(name).push(median(block));
  }
}
for (const [, t] of targets) await t.close();
/** The median over cycles of a's block median / b's. */
const perCycle = (a, b) => round(median(blockMedians.get(a).map((x, i) => x / blockMedians.get(b)[i])));

// a server per call: spawn + initialize + call is what the caller waits for; the close
// (stdin EOF, exit) is awaited outside the timing so runs never overlap.
const spawnSamples = [];
for (let i = 0; i < spawns; i++) {
  const t0 = performance.now();
  const c = new Client({ name: 'bench', version: '1' });
  await c.connect(new StdioClientTransport(serverParams));
  await c.callTool(echoArgs(i), undefined, { timeout: 10000 });
  spawnSamples.push(performance.now() - t0);
  await c.close();
}

const result = { pool: stats(samples.get('pool')), ...(baselineDir ? { baseline: stats(samples.get('baseline')) } : {}), ...(alsoDir ? { also: stats(samples.get('also')) } : {}), direct: stats(samples.get('direct')), spawnPerCall: stats(spawnSamples) };
console.log('echo over stdio, ms   median     p90    n');
for (const [name, s] of Object.entries(result)) {
  console.log(`${name.padEnd(20)} ${String(s.median).padStart(8)} ${String(s.p90).padStart(7)} ${String(s.n).padStart(4)}`);
}
const ratios = { poolVsDirect: perCycle('pool', 'direct'), ...(baselineDir ? { poolVsBaseline: perCycle('pool', 'baseline'), baselineVsDirect: perCycle('baseline', 'direct') } : {}),
  ...(alsoDir ? { poolVsAlso: perCycle('pool', 'also'), ...(baselineDir ? { alsoVsBaseline: perCycle('also', 'baseline') } : {}) } : {}) };
console.log(`\nPer cycle (median of ${cycles} cycles' block-median ratios): pool / direct ${ratios.poolVsDirect.toFixed(2)}×` +
  (baselineDir ? `; pool / baseline ${ratios.poolVsBaseline.toFixed(2)}× (baseline: ${baselineCommit}); baseline / direct ${ratios.baselineVsDirect.toFixed(2)}×` : '') +
  (alsoDir ? `; pool / also ${ratios.poolVsAlso.toFixed(2)}× (also: ${alsoCommit})${baselineDir ? `; also / baseline ${ratios.alsoVsBaseline.toFixed(2)}×` : ''}` : '') + '.');
console.log(JSON.stringify({ bench: 'mcp-pool', node: process.version, cycles, ...(baselineDir ? { baselineCommit } : {}), ...(alsoDir ? { alsoCommit } : {}), ...result, ratios }));
