#!/usr/bin/env node
// The MCP SDK client's own cost of one `tools/call`, without toolgate, a child process or a pipe:
// the v2 client (@modelcontextprotocol/client, `client.request` with the spec's CallToolResult
// schema, as the pool calls it) against the 1.x client (@modelcontextprotocol/sdk, `client.request`
// with its CallToolResultSchema, as the pool at 0df3c62 called it), each on an in-memory transport
// whose "server" answers the echo on the next turn of the event loop (setImmediate), with the
// per-call options the pool passes (timeout, maxTotalTimeout, a fresh AbortSignal).
// Each SDK runs in a process of its own (this file with --side v2|v1), visited in --cycles blocks
// of --calls calls, alternately; after --warmup calls each. Prints per-call wall and CPU time.
//
//   node bench/sdk-request.mjs [--calls 2000] [--cycles 20] [--warmup 5000]
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { flag } from './lib/args.mjs';

const side = flag('--side', '');
const calls = Number(flag('--calls', '2000'));
const cycles = Number(flag('--cycles', '20'));
const warmup = Number(flag('--warmup', '5000'));

/** An in-memory transport answering initialize and tools/call (echo) one event-loop turn later. */
function echoTransport() {
  const t = {
    start: async () => {},
    close: async () => t.onclose?.(),
    send: async (m) => {
      const text = JSON.stringify(m);
      setImmediate(() => {
        const msg = JSON.parse(text);
        if (msg.id === undefined) return;
        const result = msg.method === 'initialize'
          ? { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'echo', version: '1' } }
          : msg.method === 'tools/call' ? { content: [{ type: 'text', text: `Echo: ${msg.params.arguments.message}` }] } : {};
        t.onmessage?.(JSON.parse(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result })));
      });
    },
  };
  return t;
}

async function openSide(which) {
  const options = () => ({ timeout: 10_000, maxTotalTimeout: 10_000, resetTimeoutOnProgress: false, signal: new AbortController().signal });
  const params = (i) => ({ name: 'echo', arguments: { message: `m ${i}` } });
  if (which === 'v2') {
    const { Client, specTypeSchemas } = await import('@modelcontextprotocol/client');
    const c = new Client({ name: 'bench', version: '1' }, { versionNegotiation: { mode: 'legacy' } });
    await c.connect(echoTransport());
    return (i) => c.request({ method: 'tools/call', params: params(i) }, specTypeSchemas.CallToolResult, options());
  }
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { CallToolResultSchema } = await import('@modelcontextprotocol/sdk/types.js');
  const c = new Client({ name: 'bench', version: '1' });
  await c.connect(echoTransport());
  return (i) => c.request({ method: 'tools/call', params: params(i) }, CallToolResultSchema, options());
}

if (side) {
  const call = await openSide(side);
  for (let i = 0; i < warmup; i++) await call(i);
  process.on('message', async ({ n }) => {
    if (n === 0) process.exit(0);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await call(i);
    const wallUs = ((performance.now() - t0) * 1000) / n;
    const cpu = process.cpuUsage(cpu0);
    process.send({ wallUs, cpuUs: (cpu.user + cpu.system) / n });
  });
  process.send({ ready: true });
} else {
  const self = fileURLToPath(import.meta.url);
  const open = (which) => new Promise((resolve) => {
    const child = fork(self, ['--side', which, '--warmup', String(warmup)]);
    let waiting;
    child.on('message', (m) => (m.ready ? resolve(block) : waiting?.(m)));
    const block = (n) => new Promise((r) => {
      waiting = r;
      child.send({ n });
    });
    block.close = () => child.send({ n: 0 });
  });
  const sides = { v2: await open('v2'), v1: await open('v1') };
  const got = { v2: [], v1: [] };
  for (let c = 0; c < cycles; c++) for (const s of c % 2 ? ['v1', 'v2'] : ['v2', 'v1']) got[s].push(await sides[s](calls));
  for (const s of Object.values(sides)) s.close();
  const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  const range = (xs) => `${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}`;
  const fig = (s, k) => ({ median: med(got[s].map((b) => b[k])), range: range(got[s].map((b) => b[k])) });
  const ratio = med(got.v2.map((b, i) => b.wallUs / got.v1[i].wallUs));
  const r = { v2: { wall: fig('v2', 'wallUs'), cpu: fig('v2', 'cpuUs') }, v1: { wall: fig('v1', 'wallUs'), cpu: fig('v1', 'cpuUs') }, wallRatioPerCycle: ratio };
  console.log(`tools/call on an in-memory echo transport, µs per call (median of ${cycles} blocks of ${calls}, range):`);
  console.log(`  v2 client  wall ${r.v2.wall.median.toFixed(1)} (${r.v2.wall.range})  CPU ${r.v2.cpu.median.toFixed(1)} (${r.v2.cpu.range})`);
  console.log(`  1.x client wall ${r.v1.wall.median.toFixed(1)} (${r.v1.wall.range})  CPU ${r.v1.cpu.median.toFixed(1)} (${r.v1.cpu.range})`);
  console.log(`  v2 / 1.x per cycle: ${ratio.toFixed(2)}×`);
  console.log(JSON.stringify({ bench: 'sdk-request', node: process.version, ...r }));
}
