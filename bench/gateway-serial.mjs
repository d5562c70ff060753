#!/usr/bin/env node
// One gateway alone (no other target alive): N serial `echo` calls of server-everything through its
// `/mcp` by the v2 client in one era, after 1,000 warm-up; prints the serial median and the gateway
// process's CPU per call (/proc, all its threads). Run builds and eras alternately for a comparison
// free of the interleaved harness's side effects (docs/benchmarks.md, issue 22).
//
//   node bench/gateway-serial.mjs DIST modern|legacy [N=4000] [PROFILE_DIR]   (PROFILE_DIR: node --cpu-prof the gateway)
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { delay, freePort } from './lib/proc.mjs';
import { everythingServerFile, root } from './lib/gateway.mjs';

const [dist, era = 'legacy', n = 4000, prof] = [resolve(process.argv[2] ?? join(root, 'dist')), process.argv[3], Number(process.argv[4] ?? 4000), process.argv[5]];
const node = process.execPath;
const EV = join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const dir = mkdtempSync(join(tmpdir(), 'toolgate-serial-'));
mkdirSync(join(dir, 'tools.d'));
writeFileSync(join(dir, 'tools.d/everything.yaml'), everythingServerFile(EV));
writeFileSync(join(dir, 'gateway.yaml'), `audit:\n  file: ${JSON.stringify(join(dir, 'audit.jsonl'))}\ntools:\n  dir: ${JSON.stringify(join(dir, 'tools.d'))}\n  watch: false\n`);
const port = await freePort();
const spawnedAt = performance.now();
const gw = spawn(node, [...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []), join(dist, 'server.js')], {
  env: { ...process.env, TOOLGATE_CONFIG: join(dir, 'gateway.yaml'), PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'error' },
  stdio: ['ignore', 'inherit', 'inherit'],
});
for (;;) {
  try {
    if ((await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200) break;
  } catch {}
  await delay(100);
}
const c = new Client({ name: 'bench', version: '1' }, { versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'legacy' } });
await c.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
const tool = (await c.listTools()).tools.find((t) => /echo$/.test(t.name)).name;
const call = async (m) => {
  const r = await c.callTool({ name: tool, arguments: { message: m } }, { timeout: 30_000 });
  if (!r.content[0].text.includes(m)) throw new Error(`wrong answer for ${m}`);
};
for (let i = 0; i < 1000; i++) await call(`warm ${i}`);
const cpuMs = () => {
  const stat = readFileSync(`/proc/${gw.pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};
const cpu0 = cpuMs();
const own0 = process.cpuUsage();
const t0 = performance.now();
const xs = [];
for (let i = 0; i < n; i++) {
  const s = performance.now();
  await call(`m ${i}`);
  xs.push(performance.now() - s);
}
const window = [t0 - spawnedAt, performance.now() - spawnedAt];
const gwCpu = ((cpuMs() - cpu0) * 1000) / n;
const own = process.cpuUsage(own0);
xs.sort((a, b) => a - b);
console.log(`${dist} ${era}: serial median ${xs[n >> 1].toFixed(3)} ms, gateway CPU ${gwCpu.toFixed(0)} µs/call, client ${((own.user + own.system) / n).toFixed(0)} µs/call; counted window ${window.map((x) => x.toFixed(0)).join('–')} ms after spawn`);
await c.close();
gw.kill('SIGTERM');
await new Promise((r) => gw.once('exit', r));
rmSync(dir, { recursive: true, force: true });
process.exit(0);
