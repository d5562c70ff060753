#!/usr/bin/env node
// Against the peers: the MCP proxies users pick today, each fronting the same server-everything
// (stdio), and toolgate's /mcp and REST paths, one at a time, with the same counts:
//   direct            an SDK client on a server-everything child over stdio (the floor; one session)
//   toolgate /mcp     dist/server.js, open loopback mode, server-everything declared in tools.d
//   toolgate REST     POST /v1/tools/everything.echo/call (undici, keep-alive); a fresh gateway per path
//   supergateway      --outputTransport sse; streamableHttp (default stateless) and --stateful
//   mcp-proxy         (punkpeye) its streamable HTTP endpoint /mcp
//   mcp-hub           its unified /mcp endpoint (the legacy SSE transport: GET /mcp, POST /messages)
// For each: warm-up, --serial sequential `echo` calls (median, p99), then --clients concurrent
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
//   npm run build && node bench/peers.mjs [--serial 1000] [--clients 32] [--duration 10] [--warmup 2]
//       [--only toolgate,mcp-proxy] [--profile] [--dist DIR]
//
// --profile: afterwards, runs toolgate again under `node --cpu-prof`, once with the concurrent /mcp
// load and once with the REST load, and prints self time per call by function and package.
// --dist DIR: run another build of toolgate (e.g. an experiment) instead of dist/.
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
import { Pool, request } from 'undici';
import { requireDist, root } from './lib/gateway.mjs';
import { delay, freePort } from './lib/proc.mjs';
import { summarize } from './lib/cpuprofile.mjs';
import { flag, has } from './lib/args.mjs';

const serialN = Number(flag('--serial', '1000'));
const clients = Number(flag('--clients', '32'));
const duration = Number(flag('--duration', '10'));
const warmupS = Number(flag('--warmup', '2'));
const only = flag('--only', '').split(',').filter(Boolean);
const profile = has('--profile');
// --profile-paths mcp,sse,rest (default mcp,rest): which of toolgate's paths to profile.
const profilePaths = flag('--profile-paths', 'mcp,rest').split(',').filter(Boolean);
const distDir = flag('--dist', join(root, 'dist'));
const SERIAL_MAX_MS = 30_000; // a peer slower than 30 ms a call gets fewer serial calls (n says how many)
const CALL_TIMEOUT = 30_000;
requireDist();
// The SDK's SSE client adds an abort listener per request to one long-lived signal: keep its warning quiet.
setMaxListeners(0);

const EVERYTHING = join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const peersDir = join(root, 'bench/peers');
const peerBin = (pkg, rel) => join(peersDir, 'node_modules', pkg, rel);
const log = (s) => process.stderr.write(`peers: ${s}\n`);

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
const textOf = (r) => (r?.content ?? []).map((c) => c.text ?? '').join('');

async function mcpClient(kind, url) {
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
  writeFileSync(
    join(toolsDir, 'everything.yaml'),
    `kind: mcp-server
name: everything
transport: stdio
command: ${JSON.stringify(node)}
args: [${JSON.stringify(EVERYTHING)}, stdio]
prestart: true
include: [echo]
overrides: { echo: { sideEffect: read, confirm: false } }
`,
  );
  // No key: open mode on loopback (a single local identity), as a developer runs it next to an agent.
  const configFile = join(dir, 'gateway.yaml');
  writeFileSync(configFile, `audit:\n  file: ${JSON.stringify(join(dir, 'audit.jsonl'))}\ntools:\n  dir: ${JSON.stringify(toolsDir)}\n  watch: false\n`);
  return { dir, configFile };
}

async function startToolgate({ nodeArgs = [] } = {}) {
  const g = toolgateDir();
  const port = await freePort();
  const h = spawnGroup(node, [...nodeArgs, join(distDir, 'server.js')], {
    env: { TOOLGATE_CONFIG: g.configFile, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
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

async function serial(c, rssPid) {
  for (let i = 0; i < 50; i++) await c.call(`warm ${i}`);
  const xs = [];
  let wrong = 0;
  const t0 = performance.now();
  for (let i = 0; i < serialN && performance.now() - t0 < SERIAL_MAX_MS; i++) {
    const m = `serial ${i}`;
    const s = performance.now();
    const text = await c.call(m);
    xs.push(performance.now() - s);
    if (!text.includes(m)) wrong++;
  }
  xs.sort((a, b) => a - b);
  return { n: xs.length, median: pct(xs, 0.5), p99: pct(xs, 0.99), wrong, rssIdle: rssPid ? treeRss(rssPid) : null };
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

async function measure(row, { client, makeClient, rssPid, sharedOnly = false }) {
  const s = await serial(client, rssPid);
  await client.close();
  let c = await concurrent(makeClient, { shared: sharedOnly, rssPid });
  let note = sharedOnly ? `${clients} callers share one session` : `${clients} sessions`;
  if (!sharedOnly && (c.wrong > 0 || c.errors > 0.01 * (c.ok + c.errors))) {
    note = `with ${clients} sessions: ${c.ok} right, ${c.wrong} wrong answers, ${c.errors} errors${c.firstError ? ` (${c.firstError})` : ''}; figures: ${clients} callers on one shared session`;
    const peakBefore = c.rssPeak;
    c = await concurrent(makeClient, { shared: true, rssPid });
    if (peakBefore.bytes > c.rssPeak.bytes) c.rssPeak = peakBefore;
    if (c.wrong || c.errors) note += `; shared: ${c.wrong} wrong, ${c.errors} errors`;
  } else if (c.ok === 0) {
    note += `; no call finished inside the counted ${duration} s`;
  } else if (c.wrong || c.errors) {
    note += `; ${c.wrong} wrong answers, ${c.errors} errors${c.firstError ? ` (${c.firstError})` : ''}`;
  }
  if (s.wrong) note += `; serial: ${s.wrong} wrong answers`;
  if (s.n < serialN) note += `; serial capped at ${SERIAL_MAX_MS / 1000} s`;
  Object.assign(row, { serial: s, conc: c, note: [row.note, note].filter(Boolean).join('; ') });
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

async function runTarget(id, label, fn) {
  if (!want(id)) return;
  log(`${label}…`);
  const row = { id, label };
  rows.push(row);
  try {
    await fn(row);
  } catch (e) {
    row.error = String(e?.message ?? e).replace(/\s+/g, ' ').slice(0, 300);
    log(`${id} failed: ${row.error}`);
  }
}

// direct
await runTarget('direct', 'direct: SDK client → server-everything over stdio (floor)', async (row) => {
  const transport = new StdioClientTransport({ command: node, args: [EVERYTHING, 'stdio'], stderr: 'ignore' });
  const c = new Client({ name: 'bench-peers', version: '1' });
  await c.connect(transport);
  const client = { call: async (m) => textOf(await c.callTool({ name: 'echo', arguments: { message: m } }, undefined, { timeout: CALL_TIMEOUT })), close: async () => {}, wrongIds: () => 0 };
  const pid = transport.pid;
  await measure(row, { client, makeClient: async () => client, rssPid: pid, sharedOnly: true });
  row.note = `${row.note}; RSS: the server only (the client is the bench process); stdio has one session`;
  await c.close();
});

// toolgate: a fresh gateway for each path, so that each RSS is its own
async function withToolgate(fn) {
  const tg = await startToolgate();
  try {
    await fn(tg);
  } finally {
    await stopGroup(tg.h);
    tg.h.cleanup();
  }
}
for (const [id, label, kind, path] of [
  ['toolgate-mcp', 'toolgate `/mcp` (Streamable HTTP)', 'http', '/mcp'],
  ['toolgate-sse', 'toolgate `/sse` (legacy SSE transport)', 'sse', '/sse'],
]) {
  await runTarget(id, label, (row) =>
    withToolgate(async (tg) => {
      const make = () => mcpClient(kind, `${tg.url}${path}`);
      await measure(row, { client: await make(), makeClient: make, rssPid: tg.h.pid });
    }),
  );
}
await runTarget('toolgate-rest', 'toolgate REST `POST /v1/tools/everything.echo/call`', (row) =>
  withToolgate(async (tg) => {
    const rest = restClientFactory(tg.url, clients);
    const client = await rest.make();
    await measure(row, { client, makeClient: rest.make, rssPid: tg.h.pid, sharedOnly: true });
    row.note = `undici Pool, ${clients} keep-alive connections`;
    await rest.close();
  }),
);

// the peers
const peersMissing = peerTargets.some((t) => want(t.id)) ? ensurePeers() : null;
for (const t of peerTargets) {
  await runTarget(t.id, t.label, async (row) => {
    if (peersMissing) throw new Error(peersMissing);
    const dir = mkdtempSync(join(tmpdir(), `peers-${t.id}-`));
    const port = await freePort();
    const config = t.setup?.(dir);
    const h = spawnGroup(node, t.args(port, config), { env: t.env?.(dir) ?? {}, cwd: dir });
    try {
      const url = `http://127.0.0.1:${port}${t.path}`;
      const client = await waitMcp(t.kind, url, h);
      if (t.id === 'mcp-hub') row.note = `tool \`${client.tool}\``;
      await measure(row, { client, makeClient: () => mcpClient(t.kind, url), rssPid: h.pid });
    } finally {
      await stopGroup(h);
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

// ---- report ----

const mib = (r) => (r && r.bytes ? `${(r.bytes / 2 ** 20).toFixed(0)} MiB (${r.procs})` : '–');
const best = (key) => Math.max(...rows.filter((r) => !r.id.startsWith('toolgate') && r.id !== 'direct' && r.conc).map(key));
let md = `\`echo\` of server-everything (stdio) through each front, called by the MCP SDK client (toolgate REST: undici). Serial: ${serialN} calls after 50 warm-up (fewer if a front needs over ${SERIAL_MAX_MS / 1000} s). Concurrent: ${clients} clients in a loop, ${warmupS} s warm-up then ${duration} s counted; only answers that echo the caller's own message count. RSS: the front's whole process tree (process count in brackets), idle after the serial phase and the peak sampled every 0.5 s under load. One target at a time, the clients in the bench process, all on the same 2 cores.\n\n`;
md += `| front | serial median | serial p99 | calls/s, ${clients} clients | p50 / p99 under load | CPU per call: front tree / client | RSS idle | RSS peak under load | note |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n`;
for (const r of rows) {
  if (r.error) {
    md += `| ${r.label} | – | – | – | – | – | – | – | **not measured**: ${r.error.replaceAll('|', '\\|')} |\n`;
    continue;
  }
  const s = r.serial;
  const c = r.conc;
  md += `| ${r.label} | ${ms(s.median)} ms | ${ms(s.p99)} ms | ${Math.round(c.rps).toLocaleString('en-US')} | ${ms(c.p50)} / ${ms(c.p99)} ms | ${c.cpu ? `${Math.round(c.cpu.frontUs)} / ${Math.round(c.cpu.clientUs)} µs` : '–'} | ${mib(s.rssIdle)} | ${mib(c.rssPeak)} | ${(r.note ?? '').replaceAll('|', '\\|')}${s.n < serialN ? ` (serial n = ${s.n})` : ''} |\n`;
}
const peersMeasured = rows.filter((r) => !r.id.startsWith('toolgate') && r.id !== 'direct' && r.conc);
if (peersMeasured.length) {
  const bestRps = best((r) => r.conc.rps);
  const bestMedian = Math.min(...peersMeasured.map((r) => r.serial.median));
  for (const id of ['toolgate-mcp', 'toolgate-sse', 'toolgate-rest']) {
    const r = rows.find((x) => x.id === id && x.conc);
    if (!r) continue;
    md += `\n${id === 'toolgate-mcp' ? 'toolgate `/mcp`' : id === 'toolgate-sse' ? 'toolgate `/sse`' : 'toolgate REST'}: serial median ${ms(r.serial.median)} ms vs the best peer's ${ms(bestMedian)} ms (${r.serial.median <= bestMedian ? 'ahead' : '**behind**'}); ${Math.round(r.conc.rps)} calls/s vs the best peer's ${Math.round(bestRps)} (${r.conc.rps >= bestRps ? 'ahead' : '**behind**'}).`;
  }
  md += '\n';
}
const json = rows.map((r) => ({ id: r.id, error: r.error, serial: r.serial && { n: r.serial.n, median: r.serial.median, p99: r.serial.p99, rssIdle: r.serial.rssIdle?.bytes }, conc: r.conc && { rps: r.conc.rps, ok: r.conc.ok, wrong: r.conc.wrong, errors: r.conc.errors, p50: r.conc.p50, p99: r.conc.p99, rssPeak: r.conc.rssPeak.bytes, cpu: r.conc.cpu } }));

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
    await serial(w);
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
console.log(`\n<!-- ${JSON.stringify({ bench: 'peers', node: process.version, rows: json })} -->`);
process.exit(0); // the SDK and undici clients keep sockets and timers alive
