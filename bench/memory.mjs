#!/usr/bin/env node
// Memory of the gateway process (dist/server.js as a child, VmRSS from /proc/<pid>/status) with
// --tools builtin-echo tools loaded: at idle, after half and all of --calls calls spread over every
// tool with distinct arguments (autocannon, --connections, bounded by --max-seconds), and after a
// settle (a forced full GC, through a bench-only preload that answers SIGUSR2, then --settle s idle).
// A leak check: RSS growth from idle to settled must stay under --bound MiB.
//
//   npm run build && node bench/memory.mjs [--tools 1000] [--calls 100000] [--connections 16]
//       [--settle 5] [--bound 50] [--max-seconds 400]
//
// Prints a markdown table and one JSON line for baselines.
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
const settle = Number(flag('--settle', '5'));
const bound = Number(flag('--bound', '50'));
const maxSeconds = Number(flag('--max-seconds', '400'));
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
const gdir = makeGatewayDir(files);
let gw;
let exitCode = 0;
const MiB = 2 ** 20;
try {
  let memWaiter;
  gw = await startGateway(gdir, {
    nodeArgs: ['--expose-gc', '--import', join(root, 'bench/lib/gc-on-signal.mjs')],
    onLine: (line) => {
      if (line.startsWith('MEM ')) memWaiter?.(JSON.parse(line.slice(4)));
    },
  });
  /** Forces a full GC in the gateway, lets it sit `seconds`, and returns { rss, heapUsed } (bytes). */
  const settled = async (seconds) => {
    const mem = new Promise((resolve) => (memWaiter = resolve));
    process.kill(gw.pid, 'SIGUSR2');
    const m = await Promise.race([mem, delay(10_000).then(() => Promise.reject(new Error('no MEM line from the gateway')))]);
    await delay(seconds * 1000);
    return { rss: rssBytes(gw.pid), heapUsed: m.heapUsed };
  };
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${gw.key}` };
  const probe = await request(`${gw.url}/v1/tools/bench.t7/call`, { method: 'POST', headers, body: JSON.stringify({ arguments: { message: 'hi' } }) });
  const probeText = await probe.body.text();
  if (probe.statusCode !== 200) throw new Error(`probe call: ${probe.statusCode} ${probeText}`);

  await delay(2000);
  const idle = await settled(settle);
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

  const done = first.ok + second.ok;
  const failed = first.non2xx + first.errors + second.non2xx + second.errors;
  const growth = end.rss - idle.rss;
  const met = done >= calls && growth < bound * MiB;
  const mib = (b) => `${(b / MiB).toFixed(1)} MiB`;
  const signed = (b) => `${b >= 0 ? '+' : '−'}${mib(Math.abs(b))}`;
  console.log(`| gateway process, ${tools.toLocaleString('en-US')} tools loaded | RSS | heap used (after full GC) | RSS vs idle |`);
  console.log(`| --- | --- | --- | --- |`);
  console.log(`| idle (after start, full GC, ${settle} s) | ${mib(idle.rss)} | ${mib(idle.heapUsed)} | |`);
  console.log(`| after ${Math.floor(calls / 2).toLocaleString('en-US')} calls, then full GC | ${mib(half.rss)} | ${mib(half.heapUsed)} | ${signed(half.rss - idle.rss)} |`);
  console.log(`| after ${done.toLocaleString('en-US')} calls, at once | ${mib(full.rss)} | | ${signed(full.rss - idle.rss)} |`);
  console.log(`| after ${done.toLocaleString('en-US')} calls, full GC and ${settle} s | ${mib(end.rss)} | ${mib(end.heapUsed)} | ${signed(growth)} (bound < ${bound} MiB: ${met ? 'met' : '**missed**'}) |`);
  console.log(
    `\nCalls spread round-robin over all ${tools.toLocaleString('en-US')} tools (builtin echo), each with distinct arguments, ` +
      `${connections} connections (${Math.round(done / (first.seconds + second.seconds)).toLocaleString('en-US')} calls/s), ` +
      `audited to a file; ${failed} failed. Heap growth between the two halves, after full GCs: ${signed(end.heapUsed - half.heapUsed)}.`,
  );
  console.log(
    JSON.stringify({
      bench: 'memory',
      cores: cpus().length,
      tools,
      calls: done,
      failed,
      connections,
      idle,
      half,
      full,
      end,
      growthBytes: growth,
      boundMiB: bound,
      met,
    }),
  );
} catch (e) {
  console.error(e);
  exitCode = 1;
} finally {
  if (gw) await stop(gw);
  gdir.cleanup();
}
process.exit(exitCode);
