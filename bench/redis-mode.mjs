#!/usr/bin/env node
// Redis mode against in-memory state: the same tool (bench.echo on a tiny node:http upstream) at
// --connections, each call naming a session (the loop guard counts it) under a per-caller rate limit
// (high enough never to trip), audit on. Two gateways from dist/, side by side in one run:
//   memory   state in memory, audit to a file
//   redis    state in a private redis-server (started here, a free port, no persistence), audit to
//            the file and to the Redis stream
// With --baseline <dir> (a checkout built with `npm run build`, e.g. main), the same two gateways from
// <dir>/dist as well, so before and after are measured in the same run. Rounds alternate (order
// reversed every other cycle); each figure is the median over the slices, each ratio the median of
// the cycles' own ratios. After the load, INFO commandstats of the private Redis gives the Redis
// commands each call cost (top-level commands per call; script-internal commands are not counted).
//
//   npm run build && node bench/redis-mode.mjs [--connections 32] [--cycles 9] [--slice 2] [--warmup 2]
//       [--baseline ../main-checkout] [--cpu-prof DIR]
//
// --cpu-prof DIR: every gateway runs under `node --cpu-prof` and leaves its profile in DIR on exit
// (to find where Redis mode spends its extra CPU per call).
//
// Prints a markdown table and one JSON line. Targets: redis ≥ 0.85× memory's calls/s, p99 ≤ 1.3×.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { request } from 'undici';
import { benchEchoTool, makeGatewayDir, requireDist, root } from './lib/gateway.mjs';
import { load, median } from './lib/load.mjs';
import { cpuMs, delay, freePort, spawnNode, spawnServer, stop } from './lib/proc.mjs';
import { flag } from './lib/args.mjs';

const connections = Number(flag('--connections', '32'));
const cycles = Number(flag('--cycles', '9'));
const slice = Number(flag('--slice', '2'));
const warmup = Number(flag('--warmup', '2'));
const baselineArg = flag('--baseline', '');
const profileDir = flag('--cpu-prof', '');
const baseline = baselineArg ? resolve(baselineArg) : undefined;
requireDist();
if (baseline && !existsSync(join(baseline, 'dist/server.js'))) {
  console.error(`--baseline ${baseline}: no dist/server.js (run npm run build there)`);
  process.exit(2);
}

/** One RESP command over a raw socket; resolves to the reply's text. */
function redisCommand(port, ...args) {
  return new Promise((resolvePromise, reject) => {
    const sock = createConnection({ host: '127.0.0.1', port });
    let buf = '';
    sock.setTimeout(2000, () => (sock.destroy(), reject(new Error('redis timeout'))));
    sock.on('error', reject);
    sock.on('connect', () => sock.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`));
    sock.on('data', (d) => {
      buf += d.toString();
      const m = /^\$(\d+)\r\n/.exec(buf);
      if (buf.startsWith('+') || buf.startsWith('-') || buf.startsWith(':') ? buf.includes('\r\n') : m && buf.length >= m[0].length + Number(m[1]) + 2) {
        sock.destroy();
        resolvePromise(m ? buf.slice(m[0].length, m[0].length + Number(m[1])) : buf.trim());
      }
    });
  });
}

async function startRedis() {
  const port = await freePort();
  const proc = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'], { stdio: 'ignore' });
  for (let i = 0; i < 200; i++) {
    if (proc.exitCode !== null) throw new Error(`redis-server exited with ${proc.exitCode}`);
    if ((await redisCommand(port, 'PING').catch(() => '')) === '+PONG') return { port, proc, url: `redis://127.0.0.1:${port}` };
    await delay(25);
  }
  throw new Error('redis-server did not answer PING');
}

/** A config dir for one gateway: its tools.d, audit file, a key; state in Redis when `redisUrl`. */
function gatewayDir(upstreamUrl, redisUrl, stream) {
  const tool = benchEchoTool('Bench tool. Forwards its arguments to the tiny upstream.', `  - id: upstream\n    http: { method: POST, url: "${upstreamUrl}/echo", body: "{{arguments}}" }\n`);
  return makeGatewayDir(
    { 'bench-echo.yaml': tool },
    {
      audit: redisUrl ? `  redisStream: "${stream}"\n` : '',
      extra: `limits:\n  loopRepeats: 1000000000\n  rateLimit: { requests: 1000000000, windowSeconds: 60 }\n${redisUrl ? `state:\n  redis: "${redisUrl}"\n` : ''}`,
    },
  );
}

/** `node <distDir>/server.js` on a free port, ready when /readyz answers 200. */
async function startGateway(distDir, gdir) {
  const port = await freePort();
  const h = spawnNode([...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${resolve(profileDir)}`] : []), join(distDir, 'server.js')], { env: { TOOLGATE_CONFIG: gdir.configFile, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' } });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    if (h.child.exitCode !== null) throw new Error(`gateway exited with ${h.child.exitCode}:\n${h.output()}`);
    try {
      const res = await request(`${url}/readyz`, { headersTimeout: 2000, bodyTimeout: 2000 });
      await res.body.dump();
      if (res.statusCode === 200) return { ...h, url, key: gdir.key };
    } catch {}
    await delay(100);
  }
  await stop(h, 2000);
  throw new Error(`gateway not ready:\n${h.output()}`);
}

/** Commands the gateway's scripts run inside Redis (counted by commandstats too), and the bench's own. */
const scriptInner = new Set(['incr', 'pttl', 'pexpire', 'set', 'get', 'xadd', 'info', 'config', 'ping']);

const servers = [];
const dirs = [];
let redis;
let exitCode = 0;
const load0 = loadavg();
try {
  const upstream = await spawnServer(join(root, 'bench/lib/upstream.mjs'));
  servers.push(upstream);
  redis = await startRedis();
  const builds = [{ id: '', label: 'this build', dist: join(root, 'dist') }, ...(baseline ? [{ id: 'base-', label: 'baseline', dist: join(baseline, 'dist') }] : [])];
  const targets = [];
  for (const b of builds) {
    for (const mode of ['memory', 'redis']) {
      const stream = `toolgate:audit:bench-${b.id}${mode}`;
      const gdir = gatewayDir(upstream.url, mode === 'redis' ? redis.url : undefined, stream);
      dirs.push(gdir);
      const gw = await startGateway(b.dist, gdir);
      servers.push(gw);
      targets.push({ id: `${b.id}${mode}`, label: `${b.label}, ${mode === 'redis' ? 'Redis state + audit stream' : 'in-memory state'}`, gw, stream, redis: mode === 'redis' });
    }
  }
  const shape = (t) => ({
    url: `${t.gw.url}/v1/tools/bench.echo/call`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${t.gw.key}` },
    body: JSON.stringify({ arguments: { message: 'hello', count: 3 }, sessionId: `bench-session-${t.id}` }),
  });
  for (const t of targets) {
    const s = shape(t);
    const res = await request(s.url, { method: 'POST', headers: s.headers, body: s.body });
    const text = await res.body.text();
    if (res.statusCode !== 200 || !text.includes('hello from the upstream')) throw new Error(`${t.id}: ${res.statusCode} ${text}`);
  }
  for (const t of targets) {
    process.stderr.write(`redis-mode: warm-up, ${t.id}…\n`);
    await load({ ...shape(t), connections, duration: warmup });
  }
  const conc = Object.fromEntries(targets.map((t) => [t.id, []]));
  for (let i = 0; i < cycles; i++) {
    process.stderr.write(`redis-mode: ${connections} connections, cycle ${i + 1}/${cycles}…\n`);
    for (const t of i % 2 === 0 ? targets : [...targets].reverse()) {
      const gw0 = cpuMs(t.gw.pid);
      const redis0 = cpuMs(redis.proc.pid);
      const x = await load({ ...shape(t), connections, duration: slice });
      // CPU per call answered: the gateway's, and (Redis targets) redis-server's, which shares the cores.
      x.gwCpuUs = ((cpuMs(t.gw.pid) - gw0) * 1000) / x.requests;
      x.redisCpuUs = t.redis ? ((cpuMs(redis.proc.pid) - redis0) * 1000) / x.requests : 0;
      conc[t.id].push(x);
    }
  }
  // Redis commands per call: a measured batch of calls on each Redis gateway alone, after its audit flushed.
  const commandsPerCall = {};
  for (const t of targets.filter((x) => x.redis)) {
    await delay(300);
    await redisCommand(redis.port, 'CONFIG', 'RESETSTAT');
    const n = 2000;
    const r = await load({ ...shape(t), connections: 8, amount: n });
    await delay(300); // the audit stream's last batch
    const info = await redisCommand(redis.port, 'INFO', 'commandstats');
    const topLevel = [...info.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)].filter(([, c]) => !scriptInner.has(c));
    commandsPerCall[t.id] = { calls: r.ok, commands: Object.fromEntries(topLevel.map(([, c, k]) => [c, Number(k)])) };
    commandsPerCall[t.id].perCall = Object.values(commandsPerCall[t.id].commands).reduce((a, b) => a + b, 0) / r.ok;
  }

  const med = (xs, pick) => median(xs.map(pick));
  const res = Object.fromEntries(targets.map((t) => [t.id, { rps: med(conc[t.id], (x) => x.rps), p50: med(conc[t.id], (x) => x.p50), p99: med(conc[t.id], (x) => x.p99), gwCpuUs: med(conc[t.id], (x) => x.gwCpuUs), redisCpuUs: med(conc[t.id], (x) => x.redisCpuUs), failed: conc[t.id].reduce((a, x) => a + x.non2xx + x.errors, 0) }]));
  const ratio = (a, b, pick) => median(conc[a].map((x, i) => pick(x) / pick(conc[b][i])));
  // CPU per call of the serving processes (the gateway, plus redis-server in Redis mode): steadier than calls/s on a loaded machine.
  const cpuOf = (x) => x.gwCpuUs + x.redisCpuUs;
  const ratios = { throughput: ratio('redis', 'memory', (x) => x.rps), p99: ratio('redis', 'memory', (x) => x.p99), cpu: ratio('redis', 'memory', cpuOf) };
  const baseRatios = baseline ? { throughput: ratio('base-redis', 'base-memory', (x) => x.rps), p99: ratio('base-redis', 'base-memory', (x) => x.p99), redisVsBaseRedis: ratio('redis', 'base-redis', (x) => x.rps), cpu: ratio('base-redis', 'base-memory', cpuOf) } : undefined;
  const met = { throughput: ratios.throughput >= 0.85, p99: ratios.p99 <= 1.3 };
  const ok = (b) => (b ? 'met' : '**missed**');
  const n0 = (x) => Math.round(x).toLocaleString('en-US');
  const ms = (x) => `${x.toFixed(2)} ms`;
  const load1 = loadavg();

  console.log(`| gateway | calls/s, ${connections} connections | p50 | p99 | CPU per call: gateway + redis-server | Redis commands per call | vs in-memory (calls/s; p99) |`);
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const t of targets) {
    const x = res[t.id];
    const memId = t.id.replace('redis', 'memory');
    const vs = t.redis ? `${ratio(t.id, memId, (y) => y.rps).toFixed(2)}×; ${ratio(t.id, memId, (y) => y.p99).toFixed(2)}×` : '';
    const cmds = commandsPerCall[t.id];
    const cmdText = cmds ? `${cmds.perCall.toFixed(2)} (${Object.entries(cmds.commands).map(([c, k]) => `${c} ${k}`).join(', ')}; ${cmds.calls} calls)` : '';
    const cpu = `${x.gwCpuUs.toFixed(0)}${t.redis ? ` + ${x.redisCpuUs.toFixed(0)}` : ''} µs`;
    console.log(`| ${t.label} | ${n0(x.rps)} | ${ms(x.p50)} | ${ms(x.p99)} | ${cpu} | ${cmdText} | ${vs} |`);
  }
  console.log(`\nTargets (this build, medians of per-cycle ratios): Redis mode calls/s ${ratios.throughput.toFixed(2)}× in-memory, target ≥ 0.85× (${ok(met.throughput)}); p99 ${ratios.p99.toFixed(2)}× in-memory, target ≤ 1.3× (${ok(met.p99)}); CPU per call (gateway + redis-server) ${ratios.cpu.toFixed(2)}× in-memory's.`);
  if (baseRatios) console.log(`Baseline (${baseline}): Redis mode ${baseRatios.throughput.toFixed(2)}× its in-memory calls/s, p99 ${baseRatios.p99.toFixed(2)}×, CPU per call ${baseRatios.cpu.toFixed(2)}×; this build's Redis mode gives ${baseRatios.redisVsBaseRedis.toFixed(2)}× the baseline's Redis-mode calls/s.`);
  console.log(
    `\nEach call names a session (loop guard) and counts against a per-caller rate limit of 10⁹ per 60 s; audit to a file, and in Redis mode to the stream too. ` +
      `autocannon runs in the bench process; the upstream, the gateways and redis-server are separate processes on this machine's ${cpus().length} cores. ` +
      `${warmup} s warm-up per gateway; ${cycles} cycles of ${slice} s slices, alternated; figures are medians over the slices. ` +
      `Redis commands per call: INFO commandstats (top-level commands only) over ${2000} calls at 8 connections, audit batches included. ` +
      `Load average ${load0.map((x) => x.toFixed(2)).join(' ')} at the start, ${load1.map((x) => x.toFixed(2)).join(' ')} at the end.` +
      (Object.values(res).some((x) => x.failed > 0) ? ` Failed requests: ${targets.map((t) => `${t.id} ${res[t.id].failed}`).join(', ')}.` : ''),
  );
  console.log(JSON.stringify({ bench: 'redis-mode', cores: cpus().length, connections, cycles, slice, results: res, ratios, met, commandsPerCall, perCycle: Object.fromEntries(targets.map((t) => [t.id, conc[t.id].map((x) => ({ rps: Math.round(x.rps), p99: Number(x.p99.toFixed(2)) }))])), ...(baseRatios ? { baseline: baseRatios } : {}), loadavg: { start: load0, end: load1 } }));
} catch (e) {
  console.error(e);
  exitCode = 1;
} finally {
  for (const s of servers.reverse()) await stop(s);
  if (redis) {
    redis.proc.kill('SIGTERM');
    await new Promise((r) => (redis.proc.exitCode !== null ? r() : redis.proc.once('exit', r)));
  }
  for (const d of dirs) d.cleanup();
}
process.exit(exitCode);
