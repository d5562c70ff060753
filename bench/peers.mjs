#!/usr/bin/env node
// Against the peers: the MCP proxies users pick today, each fronting the same server-everything
// (stdio), and toolgate's /mcp and REST paths, one at a time, with the same counts:
//   direct            an SDK client on a server-everything child over stdio (the floor; one session)
//   toolgate /mcp     dist/server.js, open loopback mode, server-everything declared in tools.d; with the SDK 1.x
//                     client, and with the v2 client (@modelcontextprotocol/client) in each era: legacy (the
//                     2025-11-25 handshake) and pinned to 2026-07-28 (Modern: no session; a gateway that does not
//                     offer it via server/discover gets its row marked "not supported", not a crash)
//   toolgate REST     POST /v1/tools/everything.echo/call (undici, keep-alive); a fresh gateway per path
//   supergateway      --outputTransport sse; streamableHttp (default stateless) and --stateful
//   mcp-proxy         (punkpeye) its streamable HTTP endpoint /mcp
//   mcp-hub           its unified /mcp endpoint (the legacy SSE transport: GET /mcp, POST /messages)
// Serial: every target is started first, then --serial sequential `echo` calls each (median, p99),
// interleaved in --serial-cycles blocks that visit every target in turn (the order rotated every
// cycle), so that this machine's fast and slow phases, which last minutes, fall on all of them
// alike; toolgate is judged against a peer cycle by cycle (the median of its block median over the
// peer's, blocks seconds apart). Then every target is stopped, and each gets --turns (4) concurrent
// turns alone, started afresh (all targets in one order, then the reverse, the reverse, and the first
// again; the figures are the means of the turns): --clients concurrent
// clients (each its own MCP session; REST: a keep-alive pool of as many connections) calling in a
// loop for --duration s after --warmup s: correct answers per second. Every answer is checked (it
// must echo the caller's own message); a front that sends answers to the wrong sessions is measured
// again with the clients on one shared session, and says so. CPU per call: the front's process tree
// and this (client) process over the counted window. RSS: the whole process tree (the process and
// every descendant, from /proc), idle after the serial phase and the peak sampled under load.
//
// The peers live in bench/peers (their own package.json and lockfile, never toolgate's
// dependencies) and are installed there on first use: `npm ci --prefix bench/peers`.
//
//   npm run build && node bench/peers.mjs [--serial 1000] [--serial-cycles 20] [--serial-warmup 1000] [--clients 32] [--duration 10] [--warmup 2] [--turns 4]
//       [--only toolgate,mcp-proxy] [--no-floor] [--profile] [--dist DIR]
//
// The front alone (unless --no-floor): toolgate's `/mcp` and `/sse` once more, each in a gateway whose call
// pipeline is bypassed (bench/lib/pipeline-bypass.mjs: a measuring aid, not a way to run toolgate),
// measured like the others: what the pipeline costs a call, and how the front alone compares with
// the peers. These rows never count as toolgate's figures.
//
// --profile: afterwards, runs toolgate again under `node --cpu-prof`, once with the concurrent /mcp
// load and once with the REST load, and prints self time per call by function and package.
// --dist DIR: run another build of toolgate (e.g. an experiment) instead of dist/.
// --baseline DIR: one more target, toolgate's `/mcp` from another checkout (DIR/dist, built there), called
// by the v2 client in the legacy era: the row `toolgate-baseline-mcp-v2-legacy`, against which the
// toolgate `/mcp` rows of this build are judged cycle by cycle, as against the peers. E.g.
//   node bench/peers.mjs --only toolgate-mcp-v2-legacy,toolgate-mcp-modern,baseline --baseline ../old
import { spawn, spawnSync } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { Client as ClientV2, StreamableHTTPClientTransport as StreamableHTTPClientTransportV2 } from '@modelcontextprotocol/client';
import { Pool, request } from 'undici';
import { everythingServerFile, pipelineBypass, requireDist, root } from './lib/gateway.mjs';
import { delay, freePort } from './lib/proc.mjs';
import { summarize } from './lib/cpuprofile.mjs';
import { rpsVerdict, serialVerdict } from './lib/summary.mjs';
import { median } from './lib/stats.mjs';
import { flag, has } from './lib/args.mjs';

const serialN = Number(flag('--serial', '1000'));
const serialCycles = Number(flag('--serial-cycles', '20'));
// Calls per target before the serial figures count: 50 before issue 22, too few for the JIT to
// have optimized a gateway's call path (the v2 SDK's is larger, and paid more for it).
const serialWarmup = Number(flag('--serial-warmup', '1000'));
const clients = Number(flag('--clients', '32'));
const duration = Number(flag('--duration', '10'));
const warmupS = Number(flag('--warmup', '2'));
const turnCount = Number(flag('--turns', '4'));
const only = flag('--only', '').split(',').filter(Boolean);
// --shared: every target's concurrent callers share one session (the setup a front that misroutes answers across sessions is measured with).
const sharedAll = has('--shared');
const profile = has('--profile');
// --profile-paths mcp,sse,rest (default mcp,rest): which of toolgate's paths to profile.
const profilePaths = flag('--profile-paths', 'mcp,rest').split(',').filter(Boolean);
const distDir = flag('--dist', join(root, 'dist'));
const floor = !has('--no-floor');
const baselineDir = flag('--baseline', '');
const baselineCommit = baselineDir ? spawnSync('git', ['-C', baselineDir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim() : undefined;
if (baselineDir && !existsSync(join(baselineDir, 'dist/server.js'))) {
  console.error(`No compiled gateway in ${baselineDir}/dist: build the baseline checkout first.`);
  process.exit(2);
}
const SERIAL_MAX_MS = 30_000; // a peer slower than 30 ms a call gets fewer serial calls (n says how many), in every block alike
const CALL_TIMEOUT = 30_000;
requireDist();
// The SDK's SSE client adds an abort listener per request to one long-lived signal: keep its warning quiet.
setMaxListeners(0);

const EVERYTHING = join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const peersDir = join(root, 'bench/peers');
const peerBin = (pkg, rel) => join(peersDir, 'node_modules', pkg, rel);
const log = (s) => process.stderr.write(`peers: ${s}\n`);
/** An error as one short line for a row's note. */
const errorText = (e) => String(e?.message ?? e).replace(/\s+/g, ' ').slice(0, 300);

// ---- processes: each target in its own process group, stopped by PID; descendants by PID too ----

const started = new Set();

function spawnGroup(command, args, { env = {}, cwd = root } = {}) {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  started.add(child.pid);
  let out = '';
  for (const s of [child.stdout, child.stderr]) {
    s.setEncoding('utf8');
    s.on('data', (d) => (out = (out + d).slice(-32768)));
  }
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { child, pid: child.pid, output: () => out, exited };
}

/** Every live PID whose parent chain leads to `pid`, `pid` included. */
function tree(pid) {
  const kids = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!kids.has(ppid)) kids.set(ppid, []);
      kids.get(ppid).push(Number(d));
    } catch {}
  }
  const out = [];
  const walk = (p) => {
    out.push(p);
    for (const k of kids.get(p) ?? []) walk(k);
  };
  if (existsSync(`/proc/${pid}`)) walk(pid);
  return out;
}

function treeRss(pid) {
  let sum = 0;
  let n = 0;
  for (const p of tree(pid)) {
    try {
      const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      if (m) {
        sum += Number(m[1]) * 1024;
        n++;
      }
    } catch {}
  }
  return { bytes: sum, procs: n };
}

/** CPU time (user + system, ms) of every live process of the tree; children that exited are not counted. */
function treeCpuMs(pid) {
  let sum = 0;
  for (const p of tree(pid)) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      sum += (Number(f[11]) + Number(f[12])) * 10;
    } catch {}
  }
  return sum;
}

/** SIGTERM to the group, then SIGKILL to the group and to every descendant seen before (by PID). */
async function stopGroup(h, graceMs = 5000) {
  const pids = tree(h.pid);
  const alive = (p) => {
    try {
      process.kill(p, 0);
      return true;
    } catch {
      return false;
    }
  };
  try {
    process.kill(-h.pid, 'SIGTERM');
  } catch {}
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && pids.some(alive)) await delay(50);
  for (const p of pids.filter(alive)) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {}
  }
  try {
    process.kill(-h.pid, 'SIGKILL');
  } catch {}
  await Promise.race([h.exited, delay(2000)]);
  started.delete(h.pid);
}

process.on('exit', () => {
  for (const pid of started) {
    for (const p of tree(pid)) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {}
    }
  }
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));

// ---- MCP clients ----

const ECHO = /(^|[._])echo$/;
const MODERN = '2026-07-28';
/** The v2 client's refusal of a server that does not offer a pinned revision. */
const eraRefused = (e) => e?.code === 'ERA_NEGOTIATION_FAILED' || /did not offer pinned protocol version/.test(String(e?.message));
const textOf = (r) => (r?.content ?? []).map((c) => c.text ?? '').join('');

/** The v2 SDK client (kind 'v2-legacy' or 'v2-modern'), the same surface as mcpClient's. */
async function mcpClientV2(kind, url) {
  const mode = kind === 'v2-modern' ? { pin: MODERN } : 'legacy';
  const c = new ClientV2({ name: 'bench-peers', version: '1' }, { versionNegotiation: { mode } });
  const transport = new StreamableHTTPClientTransportV2(new URL(url));
  await c.connect(transport, { timeout: 20_000 });
  const tools = (await c.listTools(undefined, { timeout: 20_000 })).tools.map((t) => t.name);
  const tool = tools.find((n) => ECHO.test(n));
  if (!tool) throw new Error(`no echo tool among ${tools.length}: ${tools.slice(0, 10).join(', ')}`);
  return {
    tool,
    era: c.getProtocolEra(),
    call: async (message) => textOf(await c.callTool({ name: tool, arguments: { message } }, { timeout: CALL_TIMEOUT })),
    close: async () => {
      try {
        await transport.terminateSession?.();
      } catch {}
      await c.close().catch(() => {});
    },
    wrongIds: () => 0,
  };
}

async function mcpClient(kind, url) {
  if (kind.startsWith('v2-')) return mcpClientV2(kind, url);
  const c = new Client({ name: 'bench-peers', version: '1' });
  const transport = kind === 'sse' ? new SSEClientTransport(new URL(url)) : new StreamableHTTPClientTransport(new URL(url));
  let wrongIds = 0;
  c.onerror = (e) => {
    if (/unknown message ID/i.test(String(e?.message ?? e))) wrongIds++;
  };
  await c.connect(transport, { timeout: 20_000 });
  const tools = (await c.listTools(undefined, { timeout: 20_000 })).tools.map((t) => t.name);
  const tool = tools.find((n) => ECHO.test(n));
  if (!tool) throw new Error(`no echo tool among ${tools.length}: ${tools.slice(0, 10).join(', ')}`);
  return {
    tool,
    call: async (message) => textOf(await c.callTool({ name: tool, arguments: { message } }, undefined, { timeout: CALL_TIMEOUT })),
    close: async () => {
      try {
        await transport.terminateSession?.();
      } catch {}
      await c.close().catch(() => {});
    },
    wrongIds: () => wrongIds,
  };
}

async function waitMcp(kind, url, h, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    if (h.child.exitCode !== null || h.child.signalCode !== null) throw new Error(`exited (${h.child.exitCode ?? h.child.signalCode}): ${h.output().slice(-600)}`);
    if (Date.now() > deadline) throw new Error(`not ready in ${timeoutMs} ms (${last?.message ?? last}): ${h.output().slice(-600)}`);
    try {
      const c = await mcpClient(kind, url);
      return c;
    } catch (e) {
      last = e;
    }
    await delay(250);
  }
}

// ---- the targets ----

const node = process.execPath;
const everythingCmd = `${node} ${EVERYTHING} stdio`;

function toolgateDir() {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-peers-'));
  const toolsDir = join(dir, 'tools.d');
  mkdirSync(toolsDir);
  writeFileSync(join(toolsDir, 'everything.yaml'), everythingServerFile(EVERYTHING));
  // No key: open mode on loopback (a single local identity), as a developer runs it next to an agent.
  const configFile = join(dir, 'gateway.yaml');
  writeFileSync(configFile, `audit:\n  file: ${JSON.stringify(join(dir, 'audit.jsonl'))}\ntools:\n  dir: ${JSON.stringify(toolsDir)}\n  watch: false\n`);
  return { dir, configFile };
}

async function startToolgate({ nodeArgs = [], bypass = false, dist = distDir } = {}) {
  const g = toolgateDir();
  const port = await freePort();
  const aid = bypass ? pipelineBypass(dist) : { nodeArgs: [], env: {} };
  const h = spawnGroup(node, [...nodeArgs, ...aid.nodeArgs, join(dist, 'server.js')], {
    env: { ...aid.env, TOOLGATE_CONFIG: g.configFile, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
  });
  h.cleanup = () => rmSync(g.dir, { recursive: true, force: true });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (h.child.exitCode !== null) throw new Error(`toolgate exited: ${h.output().slice(-800)}`);
    if (Date.now() > deadline) throw new Error(`toolgate not ready: ${h.output().slice(-800)}`);
    try {
      const res = await request(`${url}/readyz`);
      await res.body.dump();
      if (res.statusCode === 200) break;
    } catch {}
    await delay(100);
  }
  return { h, url, port };
}

function restClientFactory(url, connections) {
  const pool = new Pool(url, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
  const make = async () => ({
    tool: 'everything.echo',
    call: async (message) => {
      const res = await pool.request({
        path: '/v1/tools/everything.echo/call',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ arguments: { message } }),
      });
      const body = await res.body.json();
      if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${body?.error?.code}`);
      return textOf(body.result);
    },
    close: async () => {},
    wrongIds: () => 0,
  });
  return { make, close: () => pool.close() };
}

const peerTargets = [
  {
    id: 'supergateway-sse',
    label: 'supergateway 4.0.0, `--outputTransport sse`',
    kind: 'sse',
    path: '/sse',
    args: (port) => [peerBin('supergateway', 'dist/index.js'), '--stdio', everythingCmd, '--port', String(port), '--outputTransport', 'sse', '--logLevel', 'none'],
  },
  {
    id: 'supergateway-streamable',
    label: 'supergateway 4.0.0, `--outputTransport streamableHttp` (default: stateless)',
    kind: 'http',
    path: '/mcp',
    args: (port) => [peerBin('supergateway', 'dist/index.js'), '--stdio', everythingCmd, '--port', String(port), '--outputTransport', 'streamableHttp', '--logLevel', 'none'],
  },
  {
    id: 'supergateway-stateful',
    label: 'supergateway 4.0.0, `--outputTransport streamableHttp --stateful`',
    kind: 'http',
    path: '/mcp',
    args: (port) => [peerBin('supergateway', 'dist/index.js'), '--stdio', everythingCmd, '--port', String(port), '--outputTransport', 'streamableHttp', '--stateful', '--logLevel', 'none'],
  },
  {
    id: 'mcp-proxy',
    label: 'mcp-proxy 6.7.19 (punkpeye), streamable HTTP `/mcp`',
    kind: 'http',
    path: '/mcp',
    args: (port) => [peerBin('mcp-proxy', 'dist/bin/mcp-proxy.mjs'), '--port', String(port), '--host', '127.0.0.1', '--server', 'stream', '--', node, EVERYTHING, 'stdio'],
  },
  {
    id: 'mcp-hub',
    label: 'mcp-hub 4.2.1, unified `/mcp` (SSE transport: GET /mcp, POST /messages)',
    kind: 'sse',
    path: '/mcp',
    setup: (dir) => {
      const config = join(dir, 'mcp-hub.json');
      writeFileSync(config, JSON.stringify({ mcpServers: { everything: { command: node, args: [EVERYTHING, 'stdio'] } } }, null, 2));
      return config;
    },
    args: (port, config) => [peerBin('mcp-hub', 'dist/cli.js'), '--port', String(port), '--config', config],
    // mcp-hub keeps a workspace cache and logs under XDG dirs: point them at the temp dir.
    env: (dir) => ({ XDG_STATE_HOME: dir, XDG_CONFIG_HOME: dir, XDG_DATA_HOME: dir, XDG_CACHE_HOME: dir }),
  },
];

// ---- measuring ----

const pct = (xs, q) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const ms = (x) => (x === undefined || Number.isNaN(x) ? '–' : x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0));

/**
 * The serial figures of every open target: --serial-warmup calls each, then `serialCycles` blocks of
 * serialN / serialCycles calls per target, the targets visited in turn (see `rotation`); a block
 * ends early past its share of SERIAL_MAX_MS. Sets each row's `serial`.
 */
/**
 * The order of cycle `c`: the targets rotated by c, so that over the cycles each takes every place
 * and follows every other target alike, and none runs two blocks back to back (with 3 targets or
 * more). The order used to be reversed every other cycle: then the middle target always came
 * straight after another one, while the first and last ran two blocks in a row at every turn.
 */
function rotation(list, c) {
  const k = c % list.length;
  return [...list.slice(k), ...list.slice(0, k)];
}

async function serialInterleaved(open) {
  const per = Math.ceil(serialN / serialCycles);
  const budgetMs = SERIAL_MAX_MS / serialCycles;
  const acc = new Map(open.map((t) => [t, { xs: [], wrong: 0, cycles: [] }]));
  // A target that fails leaves the rotation with its error; the others go on.
  const failed = (t, e) => {
    t.row.error = `serial: ${errorText(e)}`;
    log(`${t.row.id} failed: ${t.row.error}`);
    acc.delete(t);
  };
  for (const t of open) {
    try {
      for (let i = 0; i < serialWarmup; i++) await t.client.call(`warm ${i}`);
    } catch (e) {
      failed(t, e);
    }
  }
  for (let cycle = 0; cycle < serialCycles; cycle++) {
    log(`serial, cycle ${cycle + 1}/${serialCycles}…`);
    for (const t of rotation(open, cycle)) {
      const a = acc.get(t);
      if (!a) continue;
      const t0 = performance.now();
      const block = [];
      try {
        for (let i = 0; i < per && performance.now() - t0 < budgetMs; i++) {
          const m = `serial ${cycle}.${i}`;
          const s = performance.now();
          const text = await t.client.call(m);
          block.push(performance.now() - s);
          if (!text.includes(m)) a.wrong++;
        }
      } catch (e) {
        failed(t, e);
      }
      a.xs.push(...block);
      a.cycles[cycle] = block.length ? median(block) : null;
    }
  }
  for (const [t, { xs, wrong, cycles }] of acc) {
    xs.sort((a, b) => a - b);
    t.row.serial = { n: xs.length, median: pct(xs, 0.5), p99: pct(xs, 0.99), wrong, cycles, rssIdle: t.rssPid ? treeRss(t.rssPid) : null };
  }
}

/** `clients` callers: `makeClient()` each, or one shared. Counts correct answers in the measured window. */
async function concurrent(makeClient, { shared = false, rssPid } = {}) {
  const cs = [];
  if (shared) {
    const c = await makeClient();
    for (let i = 0; i < clients; i++) cs.push(c);
  } else {
    // sessions opened a few at a time (a peer may spawn a server per session)
    for (let i = 0; i < clients; i += 4) cs.push(...(await Promise.all(Array.from({ length: Math.min(4, clients - i) }, () => makeClient()))));
  }
  let peak = { bytes: 0, procs: 0 };
  const sampler = setInterval(() => {
    if (!rssPid) return;
    const r = treeRss(rssPid);
    if (r.bytes > peak.bytes) peak = r;
  }, 500);
  const t0 = performance.now();
  const from = t0 + warmupS * 1000;
  const to = from + duration * 1000;
  let ok = 0;
  let wrong = 0;
  let errors = 0;
  let cpu0;
  const cpuAt = setTimeout(() => (cpu0 = { front: rssPid ? treeCpuMs(rssPid) : 0, client: process.cpuUsage() }), warmupS * 1000);
  let cpu1;
  const cpuEnd = setTimeout(() => (cpu1 = { front: rssPid ? treeCpuMs(rssPid) : 0, client: process.cpuUsage(cpu0?.client) }), (warmupS + duration) * 1000);
  let firstError;
  const lat = [];
  await Promise.all(
    cs.map(async (c, k) => {
      for (let i = 0; performance.now() < to; i++) {
        const m = `c${k} ${i}`;
        const s = performance.now();
        try {
          const text = await c.call(m);
          const e = performance.now();
          if (s < from || e > to) continue;
          if (text.includes(m)) {
            ok++;
            lat.push(e - s);
          } else wrong++;
        } catch (err) {
          if (s >= from && s < to) errors++;
          firstError ??= String(err?.message ?? err).slice(0, 120);
          await delay(10);
        }
      }
    }),
  );
  clearInterval(sampler);
  clearTimeout(cpuAt);
  clearTimeout(cpuEnd);
  // a busy event loop may run the last loop iterations before the end timer: read it now then
  if (cpu0 && !cpu1) cpu1 = { front: rssPid ? treeCpuMs(rssPid) : 0, client: process.cpuUsage(cpu0.client) };
  const cpu = cpu0 && cpu1 && ok ? { frontUs: ((cpu1.front - cpu0.front) * 1000) / ok, clientUs: (cpu1.client.user + cpu1.client.system) / ok } : null;
  const wrongIds = [...new Set(cs)].reduce((a, c) => a + c.wrongIds(), 0);
  await Promise.all([...new Set(cs)].map((c) => c.close()));
  lat.sort((a, b) => a - b);
  return { rps: ok / duration, ok, wrong, errors, firstError, wrongIds, p50: pct(lat, 0.5), p99: pct(lat, 0.99), rssPeak: peak, cpu };
}

/** One concurrent turn of a target: { c, note } (the note says how its callers were set up). */
async function concurrentTurn({ makeClient, rssPid, sharedOnly = sharedAll, sessionless = false }) {
  let c = await concurrent(makeClient, { shared: sharedOnly, rssPid });
  let note = sharedOnly ? `${clients} callers share one session` : sessionless ? `${clients} clients, no sessions` : `${clients} sessions`;
  let shared = sharedOnly;
  if (!sharedOnly && (c.wrong > 0 || c.errors > 0.01 * (c.ok + c.errors))) {
    note = `with ${clients} sessions: ${c.ok} right, ${c.wrong} wrong answers, ${c.errors} errors${c.firstError ? ` (${c.firstError})` : ''}; figures: ${clients} callers on one shared session`;
    const peakBefore = c.rssPeak;
    c = await concurrent(makeClient, { shared: true, rssPid });
    shared = true;
    if (peakBefore.bytes > c.rssPeak.bytes) c.rssPeak = peakBefore;
    if (c.wrong || c.errors) note += `; shared: ${c.wrong} wrong, ${c.errors} errors`;
  } else if (c.ok === 0) {
    note += `; no call finished inside the counted ${duration} s`;
  } else if (c.wrong || c.errors) {
    note += `; ${c.wrong} wrong answers, ${c.errors} errors${c.firstError ? ` (${c.firstError})` : ''}`;
  }
  c.shared = shared;
  return { c, note };
}

/** A target's concurrent turns as one figure: means of the rates, latencies and CPU; counts summed; the higher RSS peak. */
function meanOfTurns(turns) {
  const mean = (pick) => {
    const xs = turns.map(pick).filter((x) => typeof x === 'number' && !Number.isNaN(x));
    return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN;
  };
  const sum = (pick) => turns.reduce((a, t) => a + pick(t), 0);
  const cpus = turns.map((t) => t.c.cpu).filter(Boolean);
  const c = {
    rps: mean((t) => t.c.rps),
    ok: sum((t) => t.c.ok),
    wrong: sum((t) => t.c.wrong),
    errors: sum((t) => t.c.errors),
    wrongIds: sum((t) => t.c.wrongIds),
    p50: mean((t) => t.c.p50),
    p99: mean((t) => t.c.p99),
    rssPeak: turns.map((t) => t.c.rssPeak).reduce((a, b) => (b.bytes > a.bytes ? b : a)),
    cpu: cpus.length ? { frontUs: mean((t) => t.c.cpu?.frontUs), clientUs: mean((t) => t.c.cpu?.clientUs) } : null,
    shared: turns.some((t) => t.c.shared),
  };
  const notes = [...new Set(turns.map((t) => t.note))];
  return { c, note: notes.length === 1 ? notes[0] : notes.map((n, i) => `turn ${i + 1}: ${n}`).join('; ') };
}

function ensurePeers() {
  const need = ['supergateway', 'mcp-proxy', 'mcp-hub'].filter((p) => !existsSync(join(peersDir, 'node_modules', p, 'package.json')));
  if (need.length === 0) return null;
  log(`installing the peers in bench/peers (npm ci)…`);
  const r = spawnSync('npm', ['ci', '--prefix', peersDir, '--ignore-scripts', '--no-audit', '--no-fund'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) return `npm ci --prefix bench/peers failed (${r.status}): ${(r.stderr || r.stdout).trim().split('\n').slice(-2).join(' ')}`;
  return null;
}

const want = (id) => only.length === 0 || only.some((o) => id.includes(o));
const rows = [];
/** Targets started and answering: { row, start, client, makeClient, rssPid, sharedOnly, close() }. */
const open = [];

/** Starts one target (`start(row)` resolves to its handle); a target that fails to start keeps its row with the error. */
async function openTarget(id, label, start) {
  if (!want(id)) return;
  log(`${label}: starting…`);
  const row = { id, label };
  rows.push(row);
  try {
    open.push({ row, start, ...(await start(row)) });
  } catch (e) {
    row.error = errorText(e);
    log(`${id} failed: ${row.error}`);
  }
}

// direct
await openTarget('direct', 'direct: SDK client → server-everything over stdio (floor)', async (row) => {
  const transport = new StdioClientTransport({ command: node, args: [EVERYTHING, 'stdio'], stderr: 'ignore' });
  const c = new Client({ name: 'bench-peers', version: '1' });
  await c.connect(transport);
  const client = { call: async (m) => textOf(await c.callTool({ name: 'echo', arguments: { message: m } }, undefined, { timeout: CALL_TIMEOUT })), close: async () => {}, wrongIds: () => 0 };
  row.note = 'RSS: the server only (the client is the bench process); stdio has one session';
  return { client, makeClient: async () => client, rssPid: transport.pid, sharedOnly: true, close: () => c.close() };
});

// toolgate: a gateway of its own for each path, so that each RSS is its own
const closeToolgate = async (tg) => {
  await stopGroup(tg.h);
  tg.h.cleanup();
};
const floorNote = 'the call pipeline bypassed (a measuring aid): the front alone';
for (const [id, label, kind, path, bypass, dist = distDir] of [
  ['toolgate-mcp', 'toolgate `/mcp` (Streamable HTTP)', 'http', '/mcp', false],
  ['toolgate-sse', 'toolgate `/sse` (legacy SSE transport)', 'sse', '/sse', false],
  ['toolgate-mcp-v2-legacy', 'toolgate `/mcp`, v2 client, legacy era (2025-11-25)', 'v2-legacy', '/mcp', false],
  ['toolgate-mcp-modern', `toolgate \`/mcp\`, v2 client pinned to ${MODERN} (Modern)`, 'v2-modern', '/mcp', false],
  ...(baselineDir ? [['toolgate-baseline-mcp-v2-legacy', `baseline: toolgate \`/mcp\` at ${baselineCommit}, v2 client, legacy era`, 'v2-legacy', '/mcp', false, join(baselineDir, 'dist')]] : []),
  ...(floor
    ? [
        ['toolgate-floor-mcp', 'toolgate `/mcp`, front alone', 'http', '/mcp', true],
        ['toolgate-floor-sse', 'toolgate `/sse`, front alone', 'sse', '/sse', true],
      ]
    : []),
]) {
  await openTarget(id, label, async (row) => {
    if (bypass) row.note = floorNote;
    const tg = await startToolgate({ bypass, dist });
    const make = () => mcpClient(kind, `${tg.url}${path}`);
    let client;
    try {
      client = await make();
    } catch (e) {
      await closeToolgate(tg);
      // a gateway that does not speak the pinned era: the row says so, the others go on
      if (eraRefused(e)) row.unsupported = true;
      throw e;
    }
    if (client.era && !row.note?.includes('era ')) row.note = [row.note, `era ${client.era}`].filter(Boolean).join('; ');
    // also measured with its callers on one shared session: the setup a misrouting peer is measured with
    // (not the Modern client: it has no session to share)
    return { client, makeClient: make, rssPid: tg.h.pid, alsoShared: kind !== 'v2-modern', sessionless: kind === 'v2-modern', close: () => closeToolgate(tg) };
  });
}
for (const [id, label, dist] of [
  ['toolgate-rest', 'toolgate REST `POST /v1/tools/everything.echo/call`', distDir],
  // --baseline: the REST path of the other checkout too, judged against this build's like /mcp
  ...(baselineDir ? [['toolgate-baseline-rest', `baseline: toolgate REST at ${baselineCommit}`, join(baselineDir, 'dist')]] : []),
]) await openTarget(id, label, async (row) => {
  const tg = await startToolgate({ dist });
  const rest = restClientFactory(tg.url, clients);
  row.note = `undici Pool, ${clients} keep-alive connections`;
  return {
    client: await rest.make(),
    makeClient: rest.make,
    rssPid: tg.h.pid,
    sharedOnly: true,
    close: async () => {
      await rest.close();
      await closeToolgate(tg);
    },
  };
});

// the peers
const peersMissing = peerTargets.some((t) => want(t.id)) ? ensurePeers() : null;
for (const t of peerTargets) {
  await openTarget(t.id, t.label, async (row) => {
    if (peersMissing) throw new Error(peersMissing);
    const dir = mkdtempSync(join(tmpdir(), `peers-${t.id}-`));
    const port = await freePort();
    const config = t.setup?.(dir);
    const h = spawnGroup(node, t.args(port, config), { env: t.env?.(dir) ?? {}, cwd: dir });
    const close = async () => {
      await stopGroup(h);
      rmSync(dir, { recursive: true, force: true });
    };
    try {
      const url = `${`http://127.0.0.1:${port}`}${t.path}`;
      const client = await waitMcp(t.kind, url, h);
      if (t.id === 'mcp-hub') row.note = `tool \`${client.tool}\``;
      return { client, makeClient: () => mcpClient(t.kind, url), rssPid: h.pid, close };
    } catch (e) {
      await close();
      throw e;
    }
  });
}

// Serial, every target in turn; then all are stopped, and each is started afresh for its concurrent
// turns alone (an idle target still costs a little CPU: with all of them up, whoever went first lost
// most). --turns turns each, the targets in the order A B B A …, so that no target's figure sits
// only early or only late in a run of this machine's phases; the figure is their mean.
await serialInterleaved(open);
for (const t of open) {
  await t.client.close().catch(() => {});
  await t.close();
}
const measured = open.filter((t) => t.row.serial && !t.row.error);
const turns = new Map(measured.map((t) => [t, []]));
const sharedTurns = new Map(measured.map((t) => [t, []]));
for (let k = 0; k < turnCount; k++) {
  // ABBA…: forward, reverse, reverse, forward, so that a drift falls on every target alike
  const order = (k + (k >> 1)) % 2 === 0 ? measured : [...measured].reverse();
  for (const t of order) {
    if (t.row.error) continue;
    log(`${t.row.label}: ${clients} clients, turn ${k + 1} of ${turnCount}…`);
    let h;
    try {
      h = await t.start(t.row);
      await h.client.close();
      turns.get(t).push(await concurrentTurn(h));
      if (h.alsoShared) sharedTurns.get(t).push(await concurrentTurn({ ...h, sharedOnly: true }));
    } catch (e) {
      t.row.error = errorText(e);
      log(`${t.row.id} failed: ${t.row.error}`);
    } finally {
      await h?.close();
    }
  }
}
for (const [t, list] of turns) {
  if (t.row.error || list.length === 0) continue;
  const { c, note } = meanOfTurns(list);
  const s = t.row.serial;
  const extra = [note, s.wrong ? `serial: ${s.wrong} wrong answers` : '', s.n < serialN ? `serial capped at ${SERIAL_MAX_MS / 1000} s` : ''];
  const sharedList = sharedTurns.get(t);
  if (sharedList.length > 0) {
    t.row.concShared = meanOfTurns(sharedList).c;
    extra.push(`${clients} callers on one shared session: ${Math.round(t.row.concShared.rps).toLocaleString('en-US')} calls/s`);
  }
  Object.assign(t.row, { conc: c, note: [t.row.note, ...extra].filter(Boolean).join('; ') });
}

// ---- report ----

const mib = (r) => (r && r.bytes ? `${(r.bytes / 2 ** 20).toFixed(0)} MiB (${r.procs})` : '–');
let md = `\`echo\` of server-everything (stdio) through each front, called by the MCP SDK client (toolgate REST: undici). Serial: ${serialN} calls after ${serialWarmup} warm-up (fewer if a front needs over ${SERIAL_MAX_MS / 1000} s in all). Concurrent: ${clients} clients in a loop, ${warmupS} s warm-up then ${duration} s counted; only answers that echo the caller's own message count. RSS: the front's whole process tree (process count in brackets), idle after the serial phase and the peak sampled every 0.5 s under load. Serial: every target started, the calls interleaved in ${serialCycles} blocks per target visiting each in turn, toolgate judged against each peer cycle by cycle (the median of the ratio of their block medians, blocks seconds apart); concurrent: one target at a time, each started afresh alone, ${turnCount} times (the targets in the order A B B A …), the figures the mean of the turns; toolgate's \`/mcp\` and \`/sse\` also with their callers on one shared session, the setup of a peer that misroutes answers across sessions, and compared with such a peer that way. The clients are in the bench process, all on the same 2 cores.\n\n`;
md += `| front | serial median | serial p99 | calls/s, ${clients} clients | p50 / p99 under load | CPU per call: front tree / client | RSS idle | RSS peak under load | note |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n`;
for (const r of rows) {
  if (r.error) {
    md += `| ${r.label} | – | – | – | – | – | – | – | **${r.unsupported ? 'not supported' : 'not measured'}**: ${r.error.replaceAll('|', '\\|')} |\n`;
    continue;
  }
  const s = r.serial;
  const c = r.conc;
  md += `| ${r.label} | ${ms(s.median)} ms | ${ms(s.p99)} ms | ${Math.round(c.rps).toLocaleString('en-US')} | ${ms(c.p50)} / ${ms(c.p99)} ms | ${c.cpu ? `${Math.round(c.cpu.frontUs)} / ${Math.round(c.cpu.clientUs)} µs` : '–'} | ${mib(s.rssIdle)} | ${mib(c.rssPeak)} | ${(r.note ?? '').replaceAll('|', '\\|')}${s.n < serialN ? ` (serial n = ${s.n})` : ''} |\n`;
}
const peersMeasured = rows.filter((r) => !r.id.startsWith('toolgate') && r.id !== 'direct' && r.conc);
if (peersMeasured.length) {
  for (const id of ['toolgate-mcp', 'toolgate-mcp-v2-legacy', 'toolgate-mcp-modern', 'toolgate-sse', 'toolgate-rest']) {
    const r = rows.find((x) => x.id === id && x.conc);
    if (!r) continue;
    const v = rpsVerdict(r, peersMeasured);
    const sv = serialVerdict(r, peersMeasured);
    const paired = sv.ratio === undefined ? '' : `, cycle by cycle ${sv.ratio.toFixed(2)}× its latency, faster in ${sv.won} of ${sv.cycles} cycles`;
    const name = { 'toolgate-mcp': 'toolgate `/mcp`', 'toolgate-mcp-v2-legacy': 'toolgate `/mcp` (v2 client, legacy)', 'toolgate-mcp-modern': `toolgate \`/mcp\` (v2 client, ${MODERN})`, 'toolgate-sse': 'toolgate `/sse`' }[id] ?? 'toolgate REST';
    md += `\n${name}: serial median ${ms(r.serial.median)} ms vs ${sv.peer}'s ${ms(sv.theirs)} ms${paired} (${sv.ahead ? 'ahead' : '**behind**'}); ${Math.round(v.ours)} calls/s vs ${v.peer}'s ${Math.round(v.theirs)}${v.shared ? ', both with the callers on one shared session' : ''} (${v.ahead ? 'ahead' : '**behind**'}).`;
  }
  md += '\n';
  for (const [id, floorId, name] of [['toolgate-mcp', 'toolgate-floor-mcp', '`/mcp`'], ['toolgate-sse', 'toolgate-floor-sse', '`/sse`']]) {
    const r = rows.find((x) => x.id === id && x.conc);
    const fl = rows.find((x) => x.id === floorId && x.conc);
    if (!r || !fl) continue;
    const own = serialVerdict(r, [fl]);
    const bare = serialVerdict(fl, peersMeasured);
    const rps = rpsVerdict(fl, peersMeasured);
    md += `\nThe front alone, ${name} (a gateway with its call pipeline bypassed): the full pipeline takes ${own.ratio?.toFixed(2) ?? '–'}× the serial latency of the front alone cycle by cycle (${ms(r.serial.median)} against ${ms(fl.serial.median)} ms) and ${Math.round(r.conc.rps)} against ${Math.round(fl.conc.rps)} calls/s; the front alone against ${bare.peer}: ${bare.ratio?.toFixed(2) ?? '–'}× its serial latency (faster in ${bare.won ?? '–'} of ${bare.cycles ?? '–'} cycles), ${Math.round(rps.ours)} against ${rps.peer}'s ${Math.round(rps.theirs)} calls/s${rps.shared ? ' on one shared session each' : ''}.`;
  }
  md += '\n';
}
const base = rows.find((x) => x.id === 'toolgate-baseline-mcp-v2-legacy' && x.conc);
if (base) {
  md += `\nAgainst the baseline (toolgate \`/mcp\` at ${baselineCommit}, v2 client, legacy era; serial: the median of the cycles' ratios of block medians, blocks seconds apart; calls/s: the means of the turns, ${clients} clients each with its own session, or none for Modern):\n\n| this build's row | serial median | vs the baseline's ${ms(base.serial.median)} ms, per cycle | calls/s | vs the baseline's ${Math.round(base.conc.rps).toLocaleString('en-US')} | CPU per call, gateway tree: this / baseline |\n| --- | --- | --- | --- | --- | --- |\n`;
  for (const r of rows.filter((x) => x.id.startsWith('toolgate-mcp') && x.conc)) {
    const sv = serialVerdict(r, [base]);
    const cpu = r.conc.cpu && base.conc.cpu ? `${Math.round(r.conc.cpu.frontUs)} / ${Math.round(base.conc.cpu.frontUs)} µs` : '–';
    md += `| ${r.label} | ${ms(r.serial.median)} ms | ${sv.ratio?.toFixed(2) ?? '–'}× (faster in ${sv.won ?? '–'} of ${sv.cycles ?? '–'} cycles) | ${Math.round(r.conc.rps).toLocaleString('en-US')} | ${(r.conc.rps / base.conc.rps).toFixed(2)}× | ${cpu} |\n`;
  }
}
const baseRest = rows.find((x) => x.id === 'toolgate-baseline-rest' && x.conc);
const rest = rows.find((x) => x.id === 'toolgate-rest' && x.conc);
if (baseRest && rest) {
  const sv = serialVerdict(rest, [baseRest]);
  const cpu = rest.conc.cpu && baseRest.conc.cpu ? `${Math.round(rest.conc.cpu.frontUs)} / ${Math.round(baseRest.conc.cpu.frontUs)} µs` : '–';
  md += `\nREST against the baseline's REST (at ${baselineCommit}): serial median ${ms(rest.serial.median)} against ${ms(baseRest.serial.median)} ms, ${sv.ratio?.toFixed(2) ?? '–'}× per cycle (faster in ${sv.won ?? '–'} of ${sv.cycles ?? '–'} cycles); ${Math.round(rest.conc.rps).toLocaleString('en-US')} against ${Math.round(baseRest.conc.rps).toLocaleString('en-US')} calls/s (${(rest.conc.rps / baseRest.conc.rps).toFixed(2)}×); CPU per call, gateway tree: ${cpu}.\n`;
}
const json = rows.map((r) => ({ id: r.id, error: r.error, unsupported: r.unsupported, serial: r.serial && { n: r.serial.n, median: r.serial.median, p99: r.serial.p99, cycles: r.serial.cycles, rssIdle: r.serial.rssIdle?.bytes }, conc: r.conc && { rps: r.conc.rps, shared: r.conc.shared, ok: r.conc.ok, wrong: r.conc.wrong, errors: r.conc.errors, p50: r.conc.p50, p99: r.conc.p99, rssPeak: r.conc.rssPeak.bytes, cpu: r.conc.cpu }, concShared: r.concShared && { rps: r.concShared.rps, p50: r.concShared.p50, p99: r.concShared.p99, cpu: r.concShared.cpu } }));

// ---- optional profile of toolgate under the concurrent load, /mcp and REST each in a fresh process ----
if (profile) {
  for (const path of profilePaths) {
    log(`profile: toolgate ${path} under --cpu-prof…`);
    const profDir = mkdtempSync(join(tmpdir(), 'toolgate-peers-prof-'));
    const spawnedAt = performance.now();
    const tg = await startToolgate({ nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profDir}`] });
    const rest = path === 'rest' ? restClientFactory(tg.url, clients) : null;
    const make = rest ? rest.make : () => mcpClient(path === 'sse' ? 'sse' : 'http', `${tg.url}/${path}`);
    const w = await make();
    for (let i = 0; i < 200; i++) await w.call(`warm ${i}`);
    await w.close();
    const loadAt = performance.now() - spawnedAt;
    const c = await concurrent(make, { shared: !!rest, rssPid: tg.h.pid });
    await rest?.close();
    await stopGroup(tg.h, 10_000);
    tg.h.cleanup();
    const file = readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(profDir, f))[0];
    if (!file) continue;
    // the counted window of the load, in ms since the profile started (≈ the spawn)
    const fromMs = loadAt + warmupS * 1000;
    const s = summarize(file, { rootDir: root, top: 25, fromMs, toMs: fromMs + duration * 1000 });
    const perCall = (msSelf) => Math.round((msSelf * 1000) / c.ok);
    const idle = s.functions.find((f) => f.name === '(idle)');
    md += `\n### Profile: toolgate ${path === 'rest' ? 'REST' : `\`/${path}\``}, ${clients} clients: ${Math.round(c.rps)} calls/s, main thread ${Math.round(100 - (idle?.pct ?? 0))} % busy\n\nSelf time per call (wall time on the main thread, within the ${duration} s counted):\n\n| µs / call | self % | function | where | callers |\n| --- | --- | --- | --- | --- |\n`;
    for (const f of s.functions) md += `| ${perCall(f.selfMs)} | ${f.pct.toFixed(1)} | ${f.name} | ${f.where} | ${f.callers.join('; ').replaceAll('|', '\\|')} |\n`;
    md += '\n| µs / call | package |\n| --- | --- |\n';
    for (const p of s.packages.slice(0, 15)) md += `| ${perCall(p.selfMs)} | ${p.pkg} |\n`;
    md += '\n| µs / call, total | toolgate function | where |\n| --- | --- | --- |\n';
    for (const f of s.inclusive.slice(0, 20)) md += `| ${perCall(f.totalMs)} | ${f.name} | ${f.where} |\n`;
    log(`profile kept at ${file}`);
  }
}

console.log(md.trim());
console.log(`\n<!-- ${JSON.stringify({ bench: 'peers', node: process.version, ...(baselineDir ? { baselineCommit } : {}), rows: json })} -->`);
process.exit(0); // the SDK and undici clients keep sockets and timers alive
