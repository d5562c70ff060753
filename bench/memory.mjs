#!/usr/bin/env node
// Memory of the gateway process (dist/server.js as a child, VmRSS from /proc/<pid>/status): idle with
// the repository's example tools (tools.d/, as `npm start` serves them), then with --tools
// builtin-echo tools loaded: at idle, after half and all of --calls calls spread over every tool with
// distinct arguments (autocannon, --connections, bounded by --max-seconds), and after --long calls in
// all. Each figure after a settle: a forced full GC (a bench-only preload that answers SIGUSR2), then
// --settle s idle. Idle is also measured as an operator sees it, the gateway left alone after start
// (no forced GC; up to --alone-seconds, see leftAlone). Targets (issue 28), in MB (10^6 bytes): idle
// left alone ≤ 90 MB with the example tools and ≤ 120 MB with 1,000 tools; growth idle → --calls
// ≤ 10 MB (both after a forced full GC); and the leak check: growth from --calls to --long calls of
// the heap after full GC under --leak-bound MiB, and of RSS under --leak-bound-rss MiB (RSS moves a
// few MiB either way with the allocator, the heap does not). --strict exits 1 when it fails.
//
//   npm run build && node bench/memory.mjs [--tools 1000] [--calls 100000] [--long 300000]
//       [--connections 16] [--settle 5] [--alone-seconds 90] [--leak-bound 2] [--leak-bound-rss 10]
//       [--max-seconds 900] [--strict]
//
// Prints a markdown table and one JSON line for baselines.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus } from 'node:os';
import { request } from 'undici';
import { makeGatewayDir, requireDist, root, startGateway } from './lib/gateway.mjs';
import { load } from './lib/load.mjs';
import { delay, rssBytes, stop } from './lib/proc.mjs';
import { flag } from './lib/args.mjs';

const tools = Number(flag('--tools', '1000'));
const calls = Number(flag('--calls', '100000'));
const connections = Number(flag('--connections', '16'));
const long = Math.max(calls, Number(flag('--long', '300000')));
const settle = Number(flag('--settle', '5'));
const leakBound = Number(flag('--leak-bound', '2'));
const leakBoundRss = Number(flag('--leak-bound-rss', '10'));
const maxSeconds = Number(flag('--max-seconds', '900'));
const aloneSeconds = Number(flag('--alone-seconds', '90'));
const strict = process.argv.includes('--strict');
const TARGET = { idleExamples: 90e6, idleTools: 120e6, growth: 10e6 };
requireDist();

const toolYaml = (i) => `name: bench.t${i}
description: Bench tool ${i}. Returns its arguments; used to measure the gateway's memory.
tags: [bench]
examples: ["echo ${i}"]
inputSchema:
  type: object
  required: [message]
  properties:
    message: { type: string, maxLength: 200 }
    t${i}_count: { type: integer, minimum: 0, maximum: 100 }
    t${i}_mode: { type: string, enum: [fast, slow, m${i}] }
sideEffect: none
backends:
  - id: b
    builtin: echo
`;

const files = {};
for (let i = 0; i < tools; i++) files[`t${String(i).padStart(5, '0')}.yaml`] = toolYaml(i);
const examples = {};
for (const name of readdirSync(join(root, 'tools.d'))) if (/\.ya?ml$/.test(name)) examples[name] = readFileSync(join(root, 'tools.d', name), 'utf8');
let gdir;
let gw;
let exitCode = 0;
const MiB = 2 ** 20;

/** Starts a gateway on `dir` with the GC preload; returns it with settled(seconds) → { rss, heapUsed } after a full GC. */
async function start(dir) {
  let memWaiter;
  const g = await startGateway(dir, {
    nodeArgs: ['--expose-gc', '--import', join(root, 'bench/lib/gc-on-signal.mjs')],
    onLine: (line) => {
      if (line.startsWith('MEM ')) memWaiter?.(JSON.parse(line.slice(4)));
    },
  });
  g.settled = async (seconds) => {
    const mem = new Promise((resolve) => (memWaiter = resolve));
    process.kill(g.pid, 'SIGUSR2');
    const m = await Promise.race([mem, delay(10_000).then(() => Promise.reject(new Error('no MEM line from the gateway')))]);
    await delay(seconds * 1000);
    return { rss: rssBytes(g.pid), heapUsed: m.heapUsed };
  };
  return g;
}

/**
 * RSS of an idle gateway left alone, as `ps` shows it to an operator, with no further forced GC.
 * V8's memory reducer runs on its own some seconds after a mark-compact while the process is idle,
 * and gives back the young generation grown while loading (≈ 32 MiB), which a forced full GC
 * (gc()) keeps. Sampled every 5 s until three samples in a row agree within 1 MiB after RSS fell
 * by more than 4 MiB, or --alone-seconds passed. Returns { rss, seconds, atStart }.
 */
async function leftAlone(g) {
  const t0 = Date.now();
  const first = rssBytes(g.pid);
  const xs = [first];
  while (Date.now() - t0 < aloneSeconds * 1000) {
    await delay(5000);
    xs.push(rssBytes(g.pid));
    const last3 = xs.slice(-3);
    if (last3.length === 3 && Math.max(...last3) - Math.min(...last3) < MiB && last3[2] < first - 4 * MiB) break;
  }
  return { rss: xs[xs.length - 1], seconds: Math.round((Date.now() - t0) / 1000), atStart: first };
}

try {
  // The example tools, as `npm start` serves them (in-memory state, file audit).
  gdir = makeGatewayDir(examples);
  gw = await start(gdir);
  await delay(2000);
  const idleExamples = await gw.settled(settle);
  const aloneExamples = await leftAlone(gw);
  await stop(gw);
  gdir.cleanup();
  gw = undefined;

  gdir = makeGatewayDir(files);
  gw = await start(gdir);
  const settled = (seconds) => gw.settled(seconds);
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${gw.key}` };
  const probe = await request(`${gw.url}/v1/tools/bench.t7/call`, { method: 'POST', headers, body: JSON.stringify({ arguments: { message: 'hi' } }) });
  const probeText = await probe.body.text();
  if (probe.statusCode !== 200) throw new Error(`probe call: ${probe.statusCode} ${probeText}`);

  await delay(2000);
  const idle = await settled(settle);
  const alone = await leftAlone(gw);
  let i = 0;
  const drive = (amount) =>
    load(
      {
        url: gw.url,
        connections,
        amount,
        requests: [
          {
            method: 'POST',
            headers,
            setupRequest: (req) => {
              const n = i++;
              req.path = `/v1/tools/bench.t${n % tools}/call`;
              req.body = JSON.stringify({ arguments: { message: `call ${n}`, [`t${n % tools}_count`]: n % 100 } });
              return req;
            },
          },
        ],
      },
      { maxSeconds: maxSeconds / 2 },
    );
  const first = await drive(Math.floor(calls / 2));
  const half = { rss: rssBytes(gw.pid) };
  Object.assign(half, await settled(1));
  const second = await drive(calls - Math.floor(calls / 2));
  const full = { rss: rssBytes(gw.pid) };
  const end = await settled(settle);
  const third = long > calls ? await drive(long - calls) : { ok: 0, non2xx: 0, errors: 0, seconds: 0 };
  const last = long > calls ? await settled(settle) : end;

  const done = first.ok + second.ok;
  const doneLong = done + third.ok;
  const failed = first.non2xx + first.errors + second.non2xx + second.errors + third.non2xx + third.errors;
  // Growth like for like: both after a forced full GC, which keeps the young generation V8 grew (at start-up, and under the calls).
  const growth = end.rss - idle.rss;
  const leak = { rss: last.rss - end.rss, heapUsed: last.heapUsed - end.heapUsed };
  const met = {
    idleExamples: aloneExamples.rss <= TARGET.idleExamples,
    idleTools: alone.rss <= TARGET.idleTools,
    growth: done >= calls && growth <= TARGET.growth,
    leak: doneLong >= long && leak.rss < leakBoundRss * MiB && leak.heapUsed < leakBound * MiB,
  };
  const mib = (b) => `${(b / MiB).toFixed(1)} MiB`;
  const signed = (b) => `${b >= 0 ? '+' : '−'}${mib(Math.abs(b))}`;
  const v = (ok) => (ok ? 'met' : '**missed**');
  const n = (x) => x.toLocaleString('en-US');
  console.log(`| gateway process | RSS | heap used (after full GC) | RSS vs idle | target |`);
  console.log(`| --- | --- | --- | --- | --- |`);
  const ex = Object.keys(examples).length;
  const mb = (b) => `${(b / 1e6).toFixed(1)} MB`;
  console.log(`| ${ex} example tools (tools.d/), idle (after start, full GC, ${settle} s) | ${mib(idleExamples.rss)} | ${mib(idleExamples.heapUsed)} | | |`);
  console.log(`| ${ex} example tools, then left alone ${aloneExamples.seconds} s more | ${mib(aloneExamples.rss)} (${mb(aloneExamples.rss)}) | | | ≤ 90 MB: ${v(met.idleExamples)} |`);
  console.log(`| ${n(tools)} tools, idle (after start, full GC, ${settle} s) | ${mib(idle.rss)} | ${mib(idle.heapUsed)} | | |`);
  console.log(`| ${n(tools)} tools, then left alone ${alone.seconds} s more | ${mib(alone.rss)} (${mb(alone.rss)}) | | | ≤ 120 MB: ${v(met.idleTools)} |`);
  console.log(`| after ${n(Math.floor(calls / 2))} calls, then full GC | ${mib(half.rss)} | ${mib(half.heapUsed)} | ${signed(half.rss - idle.rss)} | |`);
  console.log(`| after ${n(done)} calls, at once | ${mib(full.rss)} | | ${signed(full.rss - idle.rss)} | |`);
  console.log(`| after ${n(done)} calls, full GC and ${settle} s | ${mib(end.rss)} | ${mib(end.heapUsed)} | ${signed(growth)} (heap ${signed(end.heapUsed - idle.heapUsed)}) | ≤ 10 MB: ${v(met.growth)} |`);
  if (long > calls) {
    console.log(
      `| after ${n(doneLong)} calls, full GC and ${settle} s | ${mib(last.rss)} | ${mib(last.heapUsed)} | ${signed(last.rss - idle.rss)} | ` +
        `leak check, ${n(done)} → ${n(doneLong)}: RSS ${signed(leak.rss)}, heap ${signed(leak.heapUsed)} (< ${leakBoundRss} / < ${leakBound} MiB): ${v(met.leak)} |`,
    );
  }
  const secs = first.seconds + second.seconds + third.seconds;
  console.log(
    `\nCalls spread round-robin over all ${n(tools)} tools (builtin echo), each with distinct arguments, ` +
      `${connections} connections (${n(Math.round(doneLong / secs))} calls/s), ` +
      `audited to a file; ${failed} failed. Heap growth between the two halves of the first ${n(done)}, after full GCs: ${signed(end.heapUsed - half.heapUsed)}.`,
  );
  console.log(
    JSON.stringify({
      bench: 'memory',
      cores: cpus().length,
      tools,
      calls: done,
      long: doneLong,
      failed,
      connections,
      aloneExamples,
      idleExamples,
      alone,
      idle,
      half,
      full,
      end,
      last,
      growthBytes: growth,
      leak,
      leakBoundMiB: leakBound,
      leakBoundRssMiB: leakBoundRss,
      met,
    }),
  );
  if (strict && !met.leak) exitCode = 1;
} catch (e) {
  console.error(e);
  exitCode = 1;
} finally {
  if (gw) await stop(gw);
  gdir?.cleanup();
}
process.exit(exitCode);
