#!/usr/bin/env node
// Sessions at scale (issue 28, point 3): one gateway (dist/server.js) holds --sessions 2025 `/mcp`
// sessions (initialized, idle) and --streams standalone GET streams on /mcp of some of them; a
// second gateway on the same config serves the same initializes but closes each session at once
// (DELETE), so the two differ only in the sessions held, not in what their JIT has seen. Both are opened with raw HTTP (undici pools): no
// SDK client per session. Then:
//   - RSS of the loaded gateway after a full GC (bench/lib/gc-on-signal.mjs), before any session,
//     with the sessions, with the streams: per-session and per-stream bytes. Both gateways are
//     collected at the same points (a forced full GC slows the next few thousand calls);
//   - serial `tools/call` latency of a builtin echo over one session, rounds alternating between the
//     loaded gateway and the empty one (the same run, the same two cores), after --warm untimed
//     calls on each: the ratio, and each gateway's threads' CPU per call (/proc/<pid>/task);
//   - the flood: initializes past mcp.sessions.max are refused (503 + Retry-After), the open
//     sessions are kept and still callable.
// Keys: --keys API keys share the sessions (mcp.sessions.perCaller is raised to fit them).
//
//   npm run build && node bench/mcp-sessions.mjs [--sessions 10000] [--streams 2000] [--calls 500]
//       [--rounds 5] [--warm 4000] [--keys 40] [--cpu-prof DIR] [--trace V8FLAG]
// --cpu-prof DIR: both gateways profile the calls phase with the sessions open (V8 profiler, 100 µs
// sampling, bench/lib/profile-on-signal.mjs) into DIR/loaded.cpuprofile and DIR/empty.cpuprofile,
// and a summary of self time per call is printed (bench/lib/cpuprofile.mjs).
//
// Prints a markdown table and one JSON line for the summary.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Agent, Pool } from 'undici';
import { requireDist, root, startGateway } from './lib/gateway.mjs';
import { delay, rssBytes, stop, threadDelta, threadStats } from './lib/proc.mjs';
import { flag } from './lib/args.mjs';
import { median } from './lib/stats.mjs';
import { summarize } from './lib/cpuprofile.mjs';

const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

const SESSIONS = Number(flag('--sessions', '10000'));
const STREAMS = Number(flag('--streams', '2000'));
const CALLS = Number(flag('--calls', '500'));
const ROUNDS = Number(flag('--rounds', '5'));
const KEYS = Number(flag('--keys', '40'));
const WARM = Number(flag('--warm', '4000'));
const profileDir = flag('--cpu-prof', '');
// --trace FLAG (e.g. --trace --trace-gc, --trace --trace-deopt): both gateways run with that V8 flag, and the lines they print during the calls phase are shown.
const traceFlag = flag('--trace', '');
const TIMED_CALLS = CALLS * ROUNDS; // per gateway, in the calls phase
const RSS_TARGET = 2 ** 30;
const LATENCY_TARGET = 1.2;
requireDist();

const keys = Array.from({ length: KEYS }, (_, i) => ({ id: `k${i}`, key: randomBytes(24).toString('hex') }));
// Room above each key's share: the flood below must meet the global bound, not a key's own (which would evict that key's oldest).
const perCaller = Math.ceil(SESSIONS / KEYS) + 25;

function gatewayDir() {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-sessions-'));
  const toolsDir = join(dir, 'tools.d');
  mkdirSync(toolsDir);
  writeFileSync(
    join(toolsDir, 'echo.yaml'),
    `name: bench.echo\ndescription: Returns its arguments.\ninputSchema:\n  type: object\n  required: [message]\n  properties:\n    message: { type: string, maxLength: 200 }\nsideEffect: none\nbackends:\n  - id: b\n    builtin: echo\n`,
  );
  const configFile = join(dir, 'gateway.yaml');
  writeFileSync(
    configFile,
    `auth:\n  keys:\n${keys.map((k) => `    - id: ${k.id}\n      key: "${k.key}"\n`).join('')}audit:\n  file: "${join(dir, 'audit.jsonl')}"\ntools:\n  dir: "${toolsDir}"\n  watch: false\nmcp:\n  sessions:\n    perCaller: ${perCaller}\n    max: ${SESSIONS}\n`,
  );
  return { dir, configFile, key: keys[0].key, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } });
const INITIALIZED = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });
const headersFor = (key, extra = {}) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...extra });

/** One initialized session over raw HTTP: initialize, then notifications/initialized. Returns its id, or the refusal. */
async function openSession(pool, key) {
  const res = await pool.request({ method: 'POST', path: '/mcp', headers: headersFor(key), body: INIT });
  const text = await res.body.text();
  if (res.statusCode !== 200) return { status: res.statusCode, retryAfter: res.headers['retry-after'], text };
  const id = res.headers['mcp-session-id'];
  if (!text.includes('"protocolVersion"')) throw new Error(`initialize answered ${text.slice(0, 200)}`);
  const ack = await pool.request({ method: 'POST', path: '/mcp', headers: headersFor(key, { 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' }), body: INITIALIZED });
  await ack.body.dump();
  if (ack.statusCode !== 202) throw new Error(`notifications/initialized answered ${ack.statusCode}`);
  return { id, key };
}

/** Opens `n` sessions spread over the keys, `conc` at a time (`churn`: each closed again at once, DELETE). */
async function openMany(pool, n, conc = 32, churn = false) {
  const out = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (next < n) {
        const i = next++;
        const s = await openSession(pool, keys[i % KEYS].key);
        if (!s.id) throw new Error(`session ${i} refused: ${s.status} ${s.text.slice(0, 200)}`);
        if (churn) {
          const res = await pool.request({ method: 'DELETE', path: '/mcp', headers: headersFor(s.key, { 'mcp-session-id': s.id, 'mcp-protocol-version': '2025-06-18' }) });
          await res.body.dump();
          if (res.statusCode !== 200) throw new Error(`DELETE answered ${res.statusCode}`);
        } else out.push(s);
      }
    }),
  );
  return out;
}

/** A standalone GET stream of the session, held open (its bytes read and dropped). */
async function openStream(agent, url, s) {
  const res = await agent.request({ origin: url, method: 'GET', path: '/mcp', headers: { authorization: `Bearer ${s.key}`, accept: 'text/event-stream', 'mcp-session-id': s.id, 'mcp-protocol-version': '2025-06-18' } });
  if (res.statusCode !== 200) throw new Error(`GET stream answered ${res.statusCode}: ${await res.body.text()}`);
  res.body.on('data', () => undefined);
  res.body.on('error', () => undefined);
  return res;
}

let seq = 0;
/** One serial tools/call over the session: ms. */
async function call(pool, s) {
  const m = `m${seq++}`;
  const body = JSON.stringify({ jsonrpc: '2.0', id: seq, method: 'tools/call', params: { name: 'bench__echo', arguments: { message: m } } });
  const t = performance.now();
  const res = await pool.request({ method: 'POST', path: '/mcp', headers: headersFor(s.key, { 'mcp-session-id': s.id, 'mcp-protocol-version': '2025-06-18' }), body });
  const text = await res.body.text();
  const ms = performance.now() - t;
  if (res.statusCode !== 200 || !text.includes(m)) throw new Error(`tools/call answered ${res.statusCode}: ${text.slice(0, 200)}`);
  return ms;
}

/** Forces a full GC in the gateway (SIGUSR2, gc-on-signal.mjs), waits, returns its RSS and heap. */
async function settled(gw, waiters) {
  const mem = new Promise((resolve) => waiters.set(gw.pid, resolve));
  process.kill(gw.pid, 'SIGUSR2');
  const m = await mem;
  await delay(1000);
  return { rss: rssBytes(gw.pid), heapUsed: m.heapUsed };
}

/** Runs `phase` with both gateways' CPU profilers on from the start of its timed calls (SIGWINCH starts and stops them), then prints self time per call. */
async function profiledPhase(gws, phase) {
  const signal = (gw) => {
    const line = new Promise((r) => profiled.set(gw.pid, r));
    process.kill(gw.pid, 'SIGWINCH');
    return line;
  };
  const out = await phase(() => Promise.all(gws.map(signal)));
  const files = await Promise.all(gws.map(signal));
  const calls = TIMED_CALLS;
  for (const [i, name] of ['loaded', 'empty'].entries()) {
    const s = summarize(files[i], { rootDir: root, top: 15 });
    const busy = s.totalMs - (s.packages.find((p) => p.pkg === '((idle))')?.selfMs ?? 0);
    console.error(`\n${name}: ${files[i]}: busy ${(busy * 1000 / calls).toFixed(1)} µs per call of ${(s.totalMs * 1000 / calls).toFixed(1)}`);
    for (const f of s.functions) console.error(`  ${(f.selfMs * 1000 / calls).toFixed(1).padStart(7)} µs  ${f.name}  ${f.where}`);
    for (const p of s.packages.slice(0, 12)) console.error(`  ${(p.selfMs * 1000 / calls).toFixed(1).padStart(7)} µs  [${p.pkg}]`);
  }
  return out;
}

/** A gateway's threads over the calls phase, per call of its own: the main thread's CPU and run-queue wait, the other threads' CPU, in µs. */
function perCall(rows) {
  const calls = TIMED_CALLS;
  const us = (ns) => ns / 1000 / calls;
  const main = rows.find((r) => r.main);
  const others = rows.filter((r) => !r.main && r.cpuNs > 0);
  return {
    mainCpu: us(main.cpuNs),
    mainWait: us(main.waitNs),
    mainSwitches: (main.switches + main.involuntary) / calls,
    otherCpu: us(others.reduce((a, r) => a + r.cpuNs, 0)),
    busiest: others.sort((a, b) => b.cpuNs - a.cpuNs).slice(0, 3).map((r) => `${r.name} ${us(r.cpuNs).toFixed(1)}`),
  };
}

const MiB = 2 ** 20;
const gdir = gatewayDir();
const waiters = new Map();
const traced = Object.assign([], { on: false }); // --trace: the gateways' lines during the calls phase
const profiled = new Map(); // pid -> resolve of the next PROFILE line
const spawnOne = (name) => {
  let gw;
  const profiler = profileDir ? ['--import', join(root, 'bench/lib/profile-on-signal.mjs')] : [];
  const p = startGateway(gdir, {
    nodeArgs: ['--expose-gc', '--import', join(root, 'bench/lib/gc-on-signal.mjs'), ...profiler, ...(traceFlag ? [traceFlag] : [])],
    env: profileDir ? { TOOLGATE_PROFILE_FILE: join(resolve(profileDir), `${name}.cpuprofile`) } : {},
    onLine: (line) => {
      if (line.startsWith('MEM ')) waiters.get(gw?.pid)?.(JSON.parse(line.slice(4)));
      if (line.startsWith('PROFILE ')) profiled.get(gw?.pid)?.(line.slice(8));
      if (traceFlag && traced.on && !/^(MEM|PROFILE) /.test(line)) traced.push(`${name}: ${line}`);
    },
  });
  return p.then((g) => (gw = g));
};
let loaded;
let empty;
let exitCode = 0;
const load0 = loadavg()[0];
try {
  loaded = await spawnOne('loaded');
  empty = await spawnOne('empty');
  const poolOf = (gw) => new Pool(gw.url, { connections: 32, pipelining: 1, keepAliveTimeout: 60_000 });
  const lp = poolOf(loaded);
  const ep = poolOf(empty);
  const streamAgent = new Agent({ connections: STREAMS + 10, keepAliveTimeout: 60_000, headersTimeout: 30_000, bodyTimeout: 0 });

  const probeL = (await openMany(lp, 1))[0];
  const probeE = (await openMany(ep, 1))[0];
  for (let i = 0; i < 300; i++) await call(lp, probeL), await call(ep, probeE);
  // Both gateways get the same forced full GCs, at the same points: the calls after a forced full GC are
  // up to 2× slower for ~3,000 calls (measured; V8's work on worker threads, cause not isolated), so
  // collecting only the loaded one would be measured as the sessions' cost.
  const [idle, emptyIdle] = await Promise.all([settled(loaded, waiters), settled(empty, waiters)]);

  /**
   * Alternating rounds of CALLS serial calls on each gateway: medians and p99 of all. First WARM
   * untimed calls on each (interleaved in blocks): after a forced full GC both gateways answer
   * ~2× slower for ~3,000 calls, and that settling is not what the phase measures.
   */
  const latency = async (beforeTimed = () => undefined) => {
    for (let i = 0; i < WARM; i += CALLS) {
      for (let j = 0; j < CALLS; j++) await call(lp, probeL);
      for (let j = 0; j < CALLS; j++) await call(ep, probeE);
    }
    await beforeTimed();
    const xs = { loaded: [], empty: [] };
    const rounds = { loaded: [], empty: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, pool, s] of r % 2 ? [['empty', ep, probeE], ['loaded', lp, probeL]] : [['loaded', lp, probeL], ['empty', ep, probeE]]) {
        const round = [];
        for (let i = 0; i < CALLS; i++) round.push(await call(pool, s));
        xs[name].push(...round);
        rounds[name].push(Number(median(round).toFixed(3)));
      }
    }
    return Object.fromEntries(Object.entries(xs).map(([k, v]) => [k, { median: median(v), p99: percentile(v, 99), rounds: rounds[k] }]));
  };
  const before = await latency();

  const t0 = performance.now();
  // The empty gateway serves the same initializes, each session closed again at once: both have the same history, only one holds the sessions.
  const [sessions] = await Promise.all([openMany(lp, SESSIONS - 1), openMany(ep, SESSIONS - 1, 16, true)]);
  const openMs = performance.now() - t0;
  const [withSessions] = await Promise.all([settled(loaded, waiters), settled(empty, waiters)]);
  const t1 = performance.now();
  const streams = [];
  for (let i = 0; i < STREAMS; i += 100) streams.push(...(await Promise.all(sessions.slice(i, Math.min(STREAMS, i + 100)).map((s) => openStream(streamAgent, loaded.url, s)))));
  const streamMs = performance.now() - t1;
  const [withStreams, emptyAfter] = await Promise.all([settled(loaded, waiters), settled(empty, waiters)]);
  let threadsBefore;
  const timed = () => {
    threadsBefore = [loaded, empty].map((gw) => threadStats(gw.pid));
    traced.on = true;
  };
  const during = profileDir
    ? await profiledPhase([loaded, empty], (startProfiles) => latency(async () => (timed(), await startProfiles())))
    : await latency(timed);
  const threads = [loaded, empty].map((gw, i) => perCall(threadDelta(threadsBefore[i], threadStats(gw.pid), gw.pid)));
  traced.on = false;
  if (traceFlag) console.error(`${traceFlag} during the calls phase:\n${traced.join('\n')}`);

  // The flood: past the bound, initializes are refused and the open sessions stay.
  const refused = [];
  for (let i = 0; i < 20; i++) refused.push(await openSession(lp, keys[(i * 7) % KEYS].key));
  const refusals = refused.filter((r) => r.status === 503 && Number(r.retryAfter) >= 1).length;
  const oldestStillServed = await call(lp, sessions[0]).then(() => true, () => false);

  const perSession = (withSessions.rss - idle.rss) / (SESSIONS - 1);
  const perSessionHeap = (withSessions.heapUsed - idle.heapUsed) / (SESSIONS - 1);
  const perStream = (withStreams.rss - withSessions.rss) / STREAMS;
  const ratio = during.loaded.median / during.empty.median;
  const ratioBefore = before.loaded.median / before.empty.median;
  const f = (x, d = 3) => x.toFixed(d);
  console.log(`One gateway holds ${SESSIONS.toLocaleString('en-US')} initialized 2025 sessions (raw HTTP, ${KEYS} keys, perCaller ${perCaller}, max ${SESSIONS}) and ${STREAMS.toLocaleString('en-US')} standalone GET streams on /mcp (of ${STREAMS.toLocaleString('en-US')} of those sessions); a second gateway on the same config served the same initializes but closed each session at once (DELETE), and holds one. Serial \`tools/call\` of a builtin echo over one session, ${ROUNDS} alternating rounds of ${CALLS} calls per gateway after ${WARM.toLocaleString('en-US')} untimed calls on each. RSS after a forced full GC, of both gateways at the same points. Load average ${load0.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end.\n`);
  console.log('| | figure |');
  console.log('|---|---:|');
  console.log(`| RSS idle (1 session) | ${f(idle.rss / MiB, 1)} MiB |`);
  console.log(`| RSS with ${SESSIONS.toLocaleString('en-US')} sessions | ${f(withSessions.rss / MiB, 1)} MiB |`);
  console.log(`| RSS with the sessions and ${STREAMS.toLocaleString('en-US')} GET streams | **${f(withStreams.rss / MiB, 1)} MiB** (target ≤ 1,024) |`);
  console.log(`| per session: RSS / JS heap | ${f(perSession / 1024, 1)} / ${f(perSessionHeap / 1024, 1)} KiB |`);
  console.log(`| per GET stream: RSS | ${f(perStream / 1024, 1)} KiB |`);
  console.log(`| opening the sessions (32 at a time) / the streams | ${f(openMs / 1000, 1)} s (${f((SESSIONS - 1) / (openMs / 1000), 0)}/s) / ${f(streamMs / 1000, 1)} s |`);
  console.log(`| serial call median, without sessions (before, same gateways) | ${f(before.loaded.median)} vs ${f(before.empty.median)} ms (${f(ratioBefore, 2)}×) |`);
  console.log(`| serial call median, loaded vs empty gateway | **${f(during.loaded.median)} vs ${f(during.empty.median)} ms (${f(ratio, 2)}×)** (target ≤ ${LATENCY_TARGET}×) |`);
  console.log(`| serial call p99, loaded vs empty | ${f(during.loaded.p99)} vs ${f(during.empty.p99)} ms |`);
  const [tl, te] = threads;
  console.log(`| per call, main thread on a CPU, loaded vs empty | ${f(tl.mainCpu, 1)} vs ${f(te.mainCpu, 1)} µs (${f(tl.mainCpu / te.mainCpu, 2)}×) |`);
  console.log(`| per call, main thread runnable but waiting for a CPU | ${f(tl.mainWait, 1)} vs ${f(te.mainWait, 1)} µs |`);
  console.log(`| per call, the other threads' CPU (busiest) | ${f(tl.otherCpu, 1)} (${tl.busiest.join(', ')}) vs ${f(te.otherCpu, 1)} (${te.busiest.join(', ')}) µs |`);
  console.log(`| the control gateway after ${(SESSIONS - 1).toLocaleString('en-US')} sessions opened and closed: RSS / JS heap | ${f(emptyAfter.rss / MiB, 1)} / ${f(emptyAfter.heapUsed / MiB, 1)} MiB (idle ${f(emptyIdle.rss / MiB, 1)} / ${f(emptyIdle.heapUsed / MiB, 1)} MiB) |`);
  console.log(`| initializes past the bound refused with 503 + Retry-After | ${refusals} of ${refused.length}; oldest session still served: ${oldestStillServed ? 'yes' : 'no'} |`);
  const met = withStreams.rss <= RSS_TARGET && ratio <= LATENCY_TARGET;
  console.log(`\n<!-- ${JSON.stringify({ bench: 'mcp-sessions', sessions: SESSIONS, streams: STREAMS, rss: { idle: idle.rss, sessions: withSessions.rss, streams: withStreams.rss }, control: { idle: emptyIdle, after: emptyAfter }, perSession, perSessionHeap, perStream, latency: { before, during }, ratio, threads: { loaded: tl, empty: te }, refusals, refused: refused.length, oldestStillServed, targets: { rss: RSS_TARGET, ratio: LATENCY_TARGET }, met })} -->`);
  for (const s of streams) s.body.destroy();
  await Promise.all([lp.close(), ep.close(), streamAgent.destroy()]);
  if (refusals !== refused.length || !oldestStillServed) exitCode = 1;
} catch (e) {
  console.error(e);
  exitCode = 1;
} finally {
  await Promise.all([loaded?.stop(), empty?.stop()].filter(Boolean));
  gdir.cleanup();
}
process.exit(exitCode);
