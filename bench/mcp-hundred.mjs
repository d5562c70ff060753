#!/usr/bin/env node
// A hundred MCP servers (issue 28, point 4): --servers stdio servers in tools.d (each its own file,
// prestart: true, test/fixtures/mcp/tiny-server.mjs: SDK v1, one tool `whoami`), started by the
// gateway (dist/server.js) with mcp.startConcurrency at its default and, in the same run,
// alternately, at --servers (all at once). For each: the cold start (spawn of the gateway until
// /readyz: every server connected and its tools imported), the gateway's RSS and its servers' (sum),
// and one REST call of every server's tool (each must answer with its own name), then a second
// round of calls (warm: median).
//
//   npm run build && node bench/mcp-hundred.mjs [--servers 100] [--rounds 2]
//
// Prints a markdown table and one JSON line for the summary.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { makeGatewayDir, requireDist, root, startGateway } from './lib/gateway.mjs';
import { rssBytes } from './lib/proc.mjs';
import { flag } from './lib/args.mjs';
import { median } from './lib/stats.mjs';

const SERVERS = Number(flag('--servers', '100'));
const ROUNDS = Number(flag('--rounds', '2'));
const DEFAULT_CONCURRENCY = 8; // the schema's default of mcp.startConcurrency
const TINY = join(root, 'test/fixtures/mcp/tiny-server.mjs');
requireDist();

const names = Array.from({ length: SERVERS }, (_, i) => `s${String(i).padStart(3, '0')}`);
const files = Object.fromEntries(
  names.map((n) => [`${n}.yaml`, `kind: mcp-server\nname: ${n}\ntransport: stdio\ncommand: ${JSON.stringify(process.execPath)}\nargs: [${JSON.stringify(TINY)}, ${n}]\nprestart: true\noverrides: { whoami: { sideEffect: read, confirm: false } }\n`]),
);

/** RSS of the direct children of `pid` (the stdio servers: each leads its own process group), summed. */
function childrenRss(pid) {
  let sum = 0;
  let n = 0;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== pid) continue;
      sum += rssBytes(Number(d));
      n++;
    } catch {
      // gone meanwhile
    }
  }
  return { sum, n };
}

async function run(concurrency) {
  const gdir = makeGatewayDir(files);
  if (concurrency !== undefined) writeFileSync(gdir.configFile, `${readFileSync(gdir.configFile, 'utf8')}mcp:\n  startConcurrency: ${concurrency}\n`);
  const t0 = performance.now();
  const gw = await startGateway(gdir, { timeoutMs: 300_000 });
  const coldMs = performance.now() - t0;
  try {
    const pool = new Pool(gw.url, { connections: 8 });
    const callAll = async () => {
      const xs = [];
      for (const n of names) {
        const t = performance.now();
        const res = await pool.request({ method: 'POST', path: `/v1/tools/${n}.whoami/call`, headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: '{"arguments":{}}' });
        const text = await res.body.text();
        xs.push(performance.now() - t);
        if (res.statusCode !== 200 || !text.includes(`${n} `)) throw new Error(`${n}.whoami answered ${res.statusCode}: ${text.slice(0, 200)}`);
      }
      return xs;
    };
    const first = await callAll();
    const warm = await callAll();
    const servers = childrenRss(gw.pid);
    const out = { concurrency: concurrency ?? DEFAULT_CONCURRENCY, coldMs, gatewayRss: rssBytes(gw.pid), serversRss: servers.sum, children: servers.n, firstMedian: median(first), warmMedian: median(warm), reachable: names.length };
    await pool.close();
    return out;
  } finally {
    await gw.stop();
    gdir.cleanup();
  }
}

const load0 = loadavg()[0];
const results = { bounded: [], all: [] };
for (let r = 0; r < ROUNDS; r++) {
  for (const which of r % 2 ? ['all', 'bounded'] : ['bounded', 'all']) results[which].push(await run(which === 'bounded' ? undefined : SERVERS));
}
const MiB = 2 ** 20;
const f = (x, d = 0) => x.toFixed(d);
const row = (label, xs) => {
  const cold = median(xs.map((x) => x.coldMs));
  const last = xs[xs.length - 1];
  console.log(`| ${label} | ${xs.map((x) => f(x.coldMs / 1000, 1)).join(', ')} s (median **${f(cold / 1000, 1)} s**) | ${f(last.gatewayRss / MiB)} MiB | ${f(last.serversRss / MiB)} MiB (${last.children} processes, ${f(last.serversRss / last.children / MiB, 1)} each) | ${last.reachable} of ${SERVERS} | ${f(last.firstMedian, 2)} / ${f(last.warmMedian, 2)} ms |`);
  return cold;
};
console.log(`${SERVERS} stdio MCP servers in tools.d (test/fixtures/mcp/tiny-server.mjs, SDK v1, each its own file, prestart: true), the gateway started ${ROUNDS} times per setting, alternating. Cold start: spawn of the gateway until /readyz (every server connected and its tools imported). Then one REST call of each server's tool, twice. Load average ${load0.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end.\n`);
console.log('| mcp.startConcurrency | cold start, each run | gateway RSS | servers RSS | servers answering | call median, first / warm |');
console.log('|---|---:|---:|---:|---:|---:|');
const bounded = row(`${DEFAULT_CONCURRENCY} (default)`, results.bounded);
const all = row(`${SERVERS} (all at once)`, results.all);
const reachable = [...results.bounded, ...results.all].every((x) => x.reachable === SERVERS);
console.log(`\n<!-- ${JSON.stringify({ bench: 'mcp-hundred', servers: SERVERS, defaultConcurrency: DEFAULT_CONCURRENCY, coldMs: { bounded, all }, runs: results, reachable })} -->`);
process.exit(reachable ? 0 : 1);
