#!/usr/bin/env node
// Serial latency of this build against another checkout (--baseline), over several pairs of fresh
// gateway processes. Why pairs: on this 2-core machine one gateway process can run 5–10 % slower than
// another of the same build for its whole life (where its threads land, its heap layout, the JIT), so
// a comparison of one process per build (peers' serial phase) measures the two processes as much as
// the two builds. Each pair here starts both gateways afresh, the two builds taking turns to start
// first, and the figure is the median over pairs of each pair's own ratio.
//
// In a pair, three paths are called serially in interleaved blocks (each block visits both gateways,
// the order flipping every cycle): REST on a builtin `echo` tool (the HTTP front and the pipeline),
// REST on server-everything's `echo` (plus the MCP pool and stdio), and `/mcp` with the v2 SDK
// client, 2025-11-25 (plus the MCP front). Every call carries a message of its own (the loop guard
// would stop repeats).
//
//   npm run build && node bench/build-ab.mjs --baseline <checkout with dist/> [--pairs 6] [--cycles 20] [--block 300]
//
// Prints a markdown table and one JSON line.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { flag } from './lib/args.mjs';
import { everythingServerFile, makeGatewayDir, root } from './lib/gateway.mjs';
import { delay, freePort, spawnNode, stop } from './lib/proc.mjs';
import { median } from './lib/stats.mjs';

const baselineDir = flag('--baseline', '');
const pairs = Number(flag('--pairs', '6'));
const cycles = Number(flag('--cycles', '20'));
const blockSize = Number(flag('--block', '300'));
const WARMUP = 1000;
// What this harness gives a build against itself (A/A, 6 pairs, 2026-12-03): 1.01–1.03× per path. A
// ratio up to this is no slower, to within what this machine resolves; the summary judges by it.
const NOISE = 1.03;
if (!baselineDir || !existsSync(join(baselineDir, 'dist/server.js')) || !existsSync(join(root, 'dist/server.js'))) {
  console.error('usage: node bench/build-ab.mjs --baseline <checkout> (both this checkout and the baseline built: dist/server.js)');
  process.exit(2);
}
const commitOf = (dir) => execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
const builds = { this: join(root, 'dist'), baseline: join(resolve(baselineDir), 'dist') };
const commits = { this: commitOf(root), baseline: commitOf(baselineDir) };

const EVERYTHING = join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const files = {
  'everything.yaml': everythingServerFile(EVERYTHING),
  'echo.yaml': `name: bench.echo
description: Echoes its message.
inputSchema:
  type: object
  required: [message]
  properties:
    message: { type: string }
sideEffect: read
backends:
  - id: b
    builtin: echo
`,
};

/** A gateway of `dist` on a free port, ready, with its REST and /mcp callers. */
async function startBuild(dist) {
  const gdir = makeGatewayDir(files);
  const port = await freePort();
  const h = spawnNode([join(dist, 'server.js')], { env: { TOOLGATE_CONFIG: gdir.configFile, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' } });
  const url = `http://127.0.0.1:${port}`;
  const auth = { authorization: `Bearer ${gdir.key}` };
  for (let i = 0; ; i++) {
    if (h.child.exitCode !== null || i > 600) throw new Error(`gateway of ${dist} not ready:\n${h.output()}`);
    try {
      const r = await request(`${url}/readyz`);
      await r.body.dump();
      if (r.statusCode === 200) break;
    } catch {}
    await delay(100);
  }
  const client = new Client({ name: 'build-ab', version: '1' }, { versionNegotiation: { mode: 'legacy' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: auth } }));
  const mcpName = (await client.listTools()).tools.find((t) => /everything.*echo$/.test(t.name))?.name;
  if (!mcpName) throw new Error('no everything echo tool on /mcp');
  const rest = async (tool, message) => {
    const r = await request(`${url}/v1/tools/${tool}/call`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { message } }) });
    const text = await r.body.text();
    if (r.statusCode !== 200) throw new Error(`${tool}: ${r.statusCode} ${text}`);
  };
  const paths = {
    'REST, builtin echo': (m) => rest('bench.echo', m),
    'REST, server-everything echo': (m) => rest('everything.echo', m),
    '/mcp 2025-11-25, server-everything echo': async (m) => {
      const r = await client.callTool({ name: mcpName, arguments: { message: m } }, { timeout: 30_000 });
      if (r.isError) throw new Error(JSON.stringify(r.content));
    },
  };
  return {
    paths,
    close: async () => {
      await client.close().catch(() => undefined);
      await stop(h);
      gdir.cleanup();
    },
  };
}

let seq = 0;
/** The median latency (ms) of n serial calls. */
async function block(call, n) {
  const samples = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await call(`ab ${++seq}`);
    samples.push(performance.now() - t0);
  }
  return median(samples);
}

const pathNames = ['REST, builtin echo', 'REST, server-everything echo', '/mcp 2025-11-25, server-everything echo'];
const results = []; // per pair: { first, perPath: { name: { ratio, this, baseline } } }
for (let p = 0; p < pairs; p++) {
  const first = p % 2 === 0 ? 'this' : 'baseline';
  const second = first === 'this' ? 'baseline' : 'this';
  process.stderr.write(`build-ab: pair ${p + 1}/${pairs} (${first} started first)…\n`);
  const g = {};
  g[first] = await startBuild(builds[first]);
  g[second] = await startBuild(builds[second]);
  const perPath = {};
  for (const name of pathNames) {
    for (const k of ['this', 'baseline']) await block(g[k].paths[name], WARMUP);
    const ratios = [];
    const meds = { this: [], baseline: [] };
    for (let c = 0; c < cycles; c++) {
      const order = c % 2 === 0 ? ['this', 'baseline'] : ['baseline', 'this'];
      const m = {};
      for (const k of order) m[k] = await block(g[k].paths[name], blockSize);
      meds.this.push(m.this);
      meds.baseline.push(m.baseline);
      ratios.push(m.this / m.baseline);
    }
    perPath[name] = { ratio: median(ratios), this: median(meds.this), baseline: median(meds.baseline), faster: ratios.filter((r) => r < 1).length };
  }
  await g.this.close();
  await g.baseline.close();
  results.push({ first, perPath });
}

const f2 = (x) => x.toFixed(2);
const f3 = (x) => x.toFixed(3);
console.log(`Serial latency, this build (${commits.this}) against ${commits.baseline}: ${pairs} pairs of fresh gateways (the builds taking turns to start first), in each pair ${cycles} cycles of ${blockSize} calls per path and build after ${WARMUP} warm-up, the two gateways interleaved block by block. A pair's ratio is the median of its cycles' ratios of block medians; the figure is the median over pairs.`);
console.log('');
console.log('| path | this / baseline, median over pairs | each pair (▲ this build started first) | medians (ms), this / baseline |');
console.log('| --- | --- | --- | --- |');
const summary = {};
for (const name of pathNames) {
  const ratios = results.map((r) => r.perPath[name].ratio);
  summary[name] = median(ratios);
  const each = results.map((r) => `${f2(r.perPath[name].ratio)}${r.first === 'this' ? '▲' : ''}`).join(', ');
  console.log(`| ${name} | **${f2(summary[name])}×** | ${each} | ${f3(median(results.map((r) => r.perPath[name].this)))} / ${f3(median(results.map((r) => r.perPath[name].baseline)))} |`);
}
console.log(`\n<!-- ${JSON.stringify({ bench: 'build-ab', node: process.version, commits, noise: NOISE, pairs, cycles, block: blockSize, summary, results })} -->`);
process.exit(0);
