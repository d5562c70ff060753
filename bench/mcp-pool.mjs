#!/usr/bin/env node
// Latency of one MCP `echo` call (server-everything over stdio), measured in one run:
//   pool    - through McpPool (one long-lived child, shared session)
//   direct  - a bare SDK Client on one long-lived StdioClientTransport session
//   spawn   - a new server process + handshake per call (what a pool avoids)
//
//   npx tsc -p tsconfig.json && node bench/mcp-pool.mjs [--calls 200] [--spawns 10] [--dist DIR]
//
// Calls are sequential (latency, not throughput); the first 20 of each warm session are
// discarded. Prints medians and p90 in ms, and one JSON line for baselines.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { flag } from './lib/args.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const calls = Number(flag('--calls', '200'));
const spawns = Number(flag('--spawns', '10'));
const distDir = resolve(flag('--dist', `${root}dist`));
const WARMUP = 20;

if (!existsSync(`${distDir}/mcp/pool.js`)) {
  console.error(`No compiled pool at ${distDir}/mcp/pool.js: run \`npx tsc -p tsconfig.json\` first.`);
  process.exit(2);
}
const { McpPool } = await import(pathToFileURL(`${distDir}/mcp/pool.js`).href);

const EVERYTHING = `${root}node_modules/@modelcontextprotocol/server-everything/dist/index.js`;
const serverParams = { command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'pipe' };
const echoArgs = (i) => ({ name: 'echo', arguments: { message: `bench ${i}` } });

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

// pool
const pool = new McpPool([
  { kind: 'mcp-server', name: 'ev', transport: 'stdio', command: serverParams.command, args: serverParams.args, prestart: true },
]);
await pool.start();
await timed(WARMUP, (i) => pool.callTool('ev', 'echo', echoArgs(i).arguments, { deadline: Date.now() + 10000 }));
const poolSamples = await timed(calls, (i) => pool.callTool('ev', 'echo', echoArgs(i).arguments, { deadline: Date.now() + 10000 }));
await pool.close();

// direct SDK client, long-lived session
const client = new Client({ name: 'bench', version: '1' });
await client.connect(new StdioClientTransport(serverParams));
await timed(WARMUP, (i) => client.callTool(echoArgs(i), undefined, { timeout: 10000 }));
const directSamples = await timed(calls, (i) => client.callTool(echoArgs(i), undefined, { timeout: 10000 }));
await client.close();

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

const result = { pool: stats(poolSamples), direct: stats(directSamples), spawnPerCall: stats(spawnSamples) };
console.log('echo over stdio, ms   median     p90    n');
for (const [name, s] of Object.entries(result)) {
  console.log(`${name.padEnd(20)} ${String(s.median).padStart(8)} ${String(s.p90).padStart(7)} ${String(s.n).padStart(4)}`);
}
console.log(JSON.stringify({ bench: 'mcp-pool', node: process.version, ...result }));
