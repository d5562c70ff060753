#!/usr/bin/env node
// HTTP tool overhead: one tiny upstream (node:http, 127.0.0.1, a small JSON answer) loaded three ways,
// side by side in one run, by autocannon in this process:
//   direct      POST <upstream>/echo
//   bare proxy  POST /call on Fastify 5 + undici.request to the upstream (no auth, validation,
//               breaker, audit or logs): the floor for a Node gateway
//   toolgate    POST /v1/tools/bench.echo/call with a Bearer key: the full pipeline (auth, input
//               schema, routing, breaker, timeout, metrics, audit to a file), dist/server.js
//   floor       the same, in a gateway whose call pipeline is bypassed (bench/lib/pipeline-bypass.mjs,
//               a measuring aid; --no-floor leaves it out): toolgate's front alone, so that the gap to
//               the bare proxy splits into the front's share and the pipeline's
// Each server is its own child process. For each: requests/s and p50/p99 at a fixed concurrency
// (--connections), p50/p99 at a fixed rate (--rate req/s), and the CPU time the front process
// (/proc/<pid>/stat) spent per request. Latencies are measured at sub-millisecond resolution
// (autocannon's own histogram rounds to whole ms). The three paths are loaded in short slices,
// alternated: --cycles cycles of --slice s each at the fixed concurrency, --rate-cycles cycles of
// --rate-slice s at the fixed rate (after --warmup s per path); each figure is the median over the
// slices, each ratio the median of the cycles' own ratios (the two proxies measured seconds apart).
//
//   npm run build && node bench/http-overhead.mjs [--connections 32] [--cycles 11] [--slice 2]
//       [--rate 500] [--rate-connections 10] [--rate-cycles 5] [--rate-slice 4] [--warmup 2]
//       [--no-floor] [--profile [--profile-rate 2000] [--duration 10]]
//
// --profile: afterwards, runs the bare proxy and toolgate once more each under `node --cpu-prof` at
// the fixed concurrency and prints the functions, packages and files with the most self time (per
// request), and toolgate's own functions by total time. Profile times are wall time on the main
// thread: a descheduled thread counts against the frame it was in (often writev).
//
// Prints a markdown table and one JSON line for baselines. Targets: toolgate ≥ 0.85× the bare
// proxy's throughput, p99 ≤ 1.25× the bare proxy's (issue 28.5: ≤ 1.5×), p50 at the fixed rate < 1 ms above it.
import { mkdtempSync, readdirSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { benchEchoTool, makeGatewayDir, pipelineBypass, requireDist, root, startGateway } from './lib/gateway.mjs';
import { load, median } from './lib/load.mjs';
import { cpuMs, delay, spawnServer, stop } from './lib/proc.mjs';
import { summarize } from './lib/cpuprofile.mjs';
import { flag, has } from './lib/args.mjs';

const connections = Number(flag('--connections', '32'));
const cycles = Number(flag('--cycles', '11'));
const slice = Number(flag('--slice', '2'));
const rateCycles = Number(flag('--rate-cycles', '5'));
const rateSlice = Number(flag('--rate-slice', '4'));
const duration = Number(flag('--duration', '10')); // of each profiled run
const warmup = Number(flag('--warmup', '2'));
const rate = Number(flag('--rate', '500'));
const rateConnections = Number(flag('--rate-connections', '10'));
const profile = has('--profile');
const withFloor = !has('--no-floor');
// With --profile-rate N the profiled runs are driven at N req/s instead of full concurrency: a process
// that is not descheduled gives truer per-function times (wall-time samples of a busy 2-core box
// charge the waits to whatever frame was running).
const profileRate = Number(flag('--profile-rate', '0'));
requireDist();

const toolYaml = (upstreamUrl) =>
  benchEchoTool(
    'Bench tool. Forwards its arguments to the tiny upstream and returns its JSON answer.',
    `  - id: upstream
    http: { method: POST, url: "${upstreamUrl}/echo", body: "{{arguments}}" }
`,
  );

const argsBody = { message: 'hello', count: 3 };
const servers = [];
const gdir = { cleanup() {} };
let exitCode = 0;
try {
  const upstream = await spawnServer(join(root, 'bench/lib/upstream.mjs'));
  servers.push(upstream);
  const bare = await spawnServer(join(root, 'bench/lib/bare-proxy.mjs'), { args: [upstream.url] });
  servers.push(bare);
  Object.assign(gdir, makeGatewayDir({ 'bench-echo.yaml': toolYaml(upstream.url) }));
  const gw = await startGateway(gdir);
  servers.push(gw);
  const floorGw = withFloor ? await startGateway(gdir, pipelineBypass()) : undefined;
  if (floorGw) servers.push(floorGw);

  const json = { 'content-type': 'application/json' };
  const shape = (t) => ({ url: t.url, method: 'POST', headers: t.headers, body: t.body });
  const targets = [
    { id: 'direct', pid: upstream.pid, label: 'direct to the upstream', url: `${upstream.url}/echo`, headers: json, body: JSON.stringify(argsBody) },
    { id: 'bare', pid: bare.pid, label: 'bare Fastify + undici proxy', url: `${bare.url}/call`, headers: json, body: JSON.stringify({ arguments: argsBody }) },
    {
      id: 'toolgate',
      pid: gw.pid,
      label: 'toolgate, full pipeline',
      url: `${gw.url}/v1/tools/bench.echo/call`,
      headers: { ...json, authorization: `Bearer ${gw.key}` },
      body: JSON.stringify({ arguments: argsBody }),
    },
    ...(floorGw
      ? [{ id: 'floor', pid: floorGw.pid, label: 'toolgate, pipeline bypassed (floor)', url: `${floorGw.url}/v1/tools/bench.echo/call`, headers: { ...json, authorization: `Bearer ${floorGw.key}` }, body: JSON.stringify({ arguments: argsBody }) }]
      : []),
  ];
  // Each path answers 200 with the upstream's document before it is measured.
  for (const t of targets) {
    const res = await request(t.url, { method: 'POST', headers: t.headers, body: t.body });
    const text = await res.body.text();
    if (res.statusCode !== 200 || !text.includes('hello from the upstream')) throw new Error(`${t.id}: ${res.statusCode} ${text}`);
  }

  // Short slices, alternated: each cycle loads every path for --slice s (order reversed every other
  // cycle, so the two proxies are measured back to back, each first half the time), and the ratios
  // are taken per cycle. This machine's fast and slow phases last minutes; 10 s per path per round
  // put the two proxies in different phases (per-round ratios 0.49–1.20 on one build).
  for (const t of targets) {
    process.stderr.write(`http-overhead: warm-up, ${t.id}…\n`);
    await load({ ...shape(t), connections, duration: warmup });
  }
  const conc = Object.fromEntries(targets.map((t) => [t.id, []]));
  const fixed = Object.fromEntries(targets.map((t) => [t.id, []]));
  const order = (i) => (i % 2 === 0 ? targets : [...targets].reverse());
  for (let i = 0; i < cycles; i++) {
    process.stderr.write(`http-overhead: ${connections} connections, cycle ${i + 1}/${cycles}…\n`);
    for (const t of order(i)) {
      const cpu0 = cpuMs(t.pid);
      const x = await load({ ...shape(t), connections, duration: slice });
      // CPU time of the server in front (the upstream itself for `direct`) per request answered.
      x.cpuUs = ((cpuMs(t.pid) - cpu0) * 1000) / x.requests;
      conc[t.id].push(x);
    }
  }
  for (let i = 0; i < rateCycles; i++) {
    process.stderr.write(`http-overhead: ${rate} req/s, cycle ${i + 1}/${rateCycles}…\n`);
    for (const t of order(i)) fixed[t.id].push(await load({ ...shape(t), connections: rateConnections, overallRate: rate, duration: rateSlice }));
  }

  const med = (xs, pick) => median(xs.map(pick));
  const res = Object.fromEntries(
    targets.map((t) => [
      t.id,
      {
        rps: med(conc[t.id], (x) => x.rps),
        p50: med(conc[t.id], (x) => x.p50),
        p99: med(conc[t.id], (x) => x.p99),
        cpuUs: med(conc[t.id], (x) => x.cpuUs),
        rateRps: med(fixed[t.id], (x) => x.rps),
        rateP50: med(fixed[t.id], (x) => x.p50),
        rateP99: med(fixed[t.id], (x) => x.p99),
        failed: [...conc[t.id], ...fixed[t.id]].reduce((a, x) => a + x.non2xx + x.errors, 0),
      },
    ]),
  );
  // Each cycle's own ratios (the two proxies measured seconds apart); the figures are their medians.
  const perCycle = conc.bare.map((b, i) => ({
    throughput: conc.toolgate[i].rps / b.rps,
    p99: conc.toolgate[i].p99 / b.p99,
    cpu: conc.toolgate[i].cpuUs / b.cpuUs,
  }));
  const addedP50 = fixed.bare.map((b, i) => fixed.toolgate[i].p50 - b.p50);
  // The floor: toolgate's front alone against the bare proxy, and the full pipeline against the front alone.
  const floor = conc.floor
    ? {
        throughput: median(conc.floor.map((x, i) => x.rps / conc.bare[i].rps)),
        cpu: median(conc.floor.map((x, i) => x.cpuUs / conc.bare[i].cpuUs)),
        pipelineThroughput: median(conc.floor.map((x, i) => conc.toolgate[i].rps / x.rps)),
        pipelineCpu: median(conc.floor.map((x, i) => conc.toolgate[i].cpuUs / x.cpuUs)),
      }
    : undefined;
  const tg = res.toolgate;
  const bp = res.bare;
  const ratios = {
    throughput: med(perCycle, (c) => c.throughput),
    p99: med(perCycle, (c) => c.p99),
    cpu: med(perCycle, (c) => c.cpu),
    addedP50AtRate: median(addedP50),
  };
  const met = {
    throughput: ratios.throughput >= 0.85,
    p99: ratios.p99 <= 1.25,
    p99Tail: ratios.p99 <= 1.5,
    addedP50AtRate: ratios.addedP50AtRate < 1,
  };
  const ok = (b) => (b ? 'met' : '**missed**');
  const n0 = (x) => Math.round(x).toLocaleString('en-US');
  const ms = (x) => `${x.toFixed(2)} ms`;
  const row = (measure, pick, fmt, vs, target) =>
    `| ${measure} | ${fmt(pick(res.direct))} | ${fmt(pick(res.bare))} | ${fmt(pick(res.toolgate))} | ${vs} | ${target} |${res.floor ? ` ${fmt(pick(res.floor))} |` : ''}`;

  console.log(`| measure | direct to the upstream | bare Fastify + undici proxy | toolgate, full pipeline | toolgate vs bare | target |${res.floor ? ' floor: toolgate, pipeline bypassed |' : ''}`);
  console.log(`| --- | --- | --- | --- | --- | --- |${res.floor ? ' --- |' : ''}`);
  console.log(row(`requests/s, ${connections} connections`, (x) => x.rps, n0, `${ratios.throughput.toFixed(2)}×`, `≥ 0.85× (${ok(met.throughput)})`));
  console.log(row(`p50 latency, ${connections} connections`, (x) => x.p50, ms, `+${ms(tg.p50 - bp.p50)}`, ''));
  console.log(row(`p99 latency, ${connections} connections`, (x) => x.p99, ms, `${ratios.p99.toFixed(2)}×`, `≤ 1.25× (${ok(met.p99)}); issue 28.5: ≤ 1.5× (${ok(met.p99Tail)})`));
  console.log(row(`CPU of the front process per request, ${connections} connections`, (x) => x.cpuUs, (x) => `${x.toFixed(0)} µs`, `${ratios.cpu.toFixed(2)}×`, ''));
  console.log(row(`p50 latency at ${rate} req/s`, (x) => x.rateP50, ms, `+${ms(ratios.addedP50AtRate)}`, `< 1 ms added (${ok(met.addedP50AtRate)})`));
  console.log(row(`p99 latency at ${rate} req/s`, (x) => x.rateP99, ms, `${(tg.rateP99 / bp.rateP99).toFixed(2)}×`, ''));
  console.log(
    `\nautocannon runs in the bench process; the upstream, the bare proxy and toolgate are separate child processes, ` +
      `all on this machine's ${cpus().length} cores. On a 2-core machine the load generator competes with the servers ` +
      `(three busy processes on two cores for the proxied paths), so absolute figures are low and the ratios, measured in ` +
      `the same setup for all three paths, are what counts. ${warmup} s warm-up per path; ${cycles} cycles of ${slice} s slices at ${connections} connections and ${rateCycles} of ${rateSlice} s at ${rate} req/s, the paths alternated; figures are medians over the slices, ratios medians of each cycle's own; ` +
      `toolgate audits every call to a file and logs at warn. Latencies are per request at full resolution; at the fixed rate ` +
      `${rateConnections} connections share ${rate} req/s.` +
      (Object.values(res).some((x) => x.failed > 0) ? ` Failed requests (non-2xx or errors): ${targets.map((t) => `${t.id} ${res[t.id].failed}`).join(', ')}.` : ''),
  );
  const spread = (xs, fmt) => {
    const v = [...xs].sort((a, b) => a - b);
    return `${fmt(v[0])} – ${fmt(v[v.length - 1])} (middle half ${fmt(v[Math.floor(v.length / 4)])} – ${fmt(v[Math.ceil((v.length * 3) / 4) - 1])})`;
  };
  const x2 = (v) => `${v.toFixed(2)}×`;
  console.log(`
Per cycle, toolgate against the bare proxy: requests/s ${spread(perCycle.map((c) => c.throughput), x2)}; p99 ${spread(perCycle.map((c) => c.p99), x2)}; CPU per request ${spread(perCycle.map((c) => c.cpu), x2)}; p50 added at ${rate} req/s ${spread(addedP50, (v) => `${v >= 0 ? '+' : ''}${v.toFixed(2)} ms`)}.`);
  if (floor) {
    console.log(`
The floor (a gateway with its call pipeline bypassed, a measuring aid; medians of per-cycle ratios): toolgate's front alone gives ${x2(floor.throughput)} the bare proxy's requests/s at ${x2(floor.cpu)} its CPU per request; the full pipeline gives ${x2(floor.pipelineThroughput)} the front's requests/s at ${x2(floor.pipelineCpu)} its CPU per request. Per cycle, the full pipeline's CPU per request against the front alone: ${spread(conc.floor.map((x, i) => conc.toolgate[i].cpuUs / x.cpuUs), x2)}.`);
  }
  console.log(JSON.stringify({ bench: 'http-overhead', cores: cpus().length, connections, cycles, slice, rate, rateCycles, rateSlice, results: res, ratios, met, perCycle, addedP50, ...(floor ? { floor } : {}) }));

  if (profile) {
    // Each of the two proxies once more under `node --cpu-prof`, alone, at the fixed concurrency.
    for (const g of [gw, floorGw].filter(Boolean)) {
      await g.stop();
      servers.splice(servers.indexOf(g), 1);
    }
    const profiled = async (id, startIt) => {
      const profDir = mkdtempSync(join(tmpdir(), 'toolgate-prof-'));
      const spawned = Date.now();
      const h = await startIt(['--cpu-prof', `--cpu-prof-dir=${profDir}`]);
      servers.push(h);
      const t = targets.find((x) => x.id === id);
      const base = { ...shape(t), url: `${h.url}${new URL(t.url).pathname}` };
      const mode = profileRate > 0 ? { connections: rateConnections, overallRate: profileRate } : { connections };
      await load({ ...base, ...mode, duration: warmup });
      const fromMs = Date.now() - spawned; // the profile starts with the process: leave start-up and warm-up out
      const run = await load({ ...base, ...mode, duration });
      const toMs = Date.now() - spawned;
      await stop(h);
      servers.splice(servers.indexOf(h), 1);
      const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
      if (!file) throw new Error(`${id}: no .cpuprofile written`);
      const s = summarize(join(profDir, file), { rootDir: root, top: 30, fromMs, toMs });
      const perReq = (selfMs) => `${((selfMs * 1000) / run.requests).toFixed(1)} µs`;
      console.log(`\nCPU profile of ${t.label} under ${profileRate > 0 ? `${profileRate} req/s` : `${connections} connections`} for ${duration} s (${n0(run.rps)} req/s while profiled; ${join(profDir, file)}):\n`);
      console.log(`| self time | per request | % | function | where | called from |`);
      console.log(`| --- | --- | --- | --- | --- | --- |`);
      for (const f of s.functions) console.log(`| ${f.selfMs.toFixed(0)} ms | ${perReq(f.selfMs)} | ${f.pct.toFixed(1)} | ${f.name} | ${f.where} | ${f.callers.join('; ')} |`);
      console.log(`\n| self time | per request | % | package or native frame |`);
      console.log(`| --- | --- | --- | --- |`);
      for (const f of s.packages.slice(0, 16)) console.log(`| ${f.selfMs.toFixed(0)} ms | ${perReq(f.selfMs)} | ${f.pct.toFixed(1)} | ${f.pkg} |`);
      console.log(`\n| self time | per request | % | file |`);
      console.log(`| --- | --- | --- | --- |`);
      for (const f of s.files.slice(0, 20)) console.log(`| ${f.selfMs.toFixed(0)} ms | ${perReq(f.selfMs)} | ${f.pct.toFixed(1)} | ${f.file} |`);
      if (s.inclusive.length > 0) {
        console.log(`\nToolgate's own functions (dist/), total time including callees:\n`);
        console.log(`| total time | per request | % | function | where |`);
        console.log(`| --- | --- | --- | --- | --- |`);
        for (const f of s.inclusive) console.log(`| ${f.totalMs.toFixed(0)} ms | ${perReq(f.totalMs)} | ${f.pct.toFixed(1)} | ${f.name} | ${f.where} |`);
      }
    };
    await profiled('bare', (nodeArgs) => spawnServer(join(root, 'bench/lib/bare-proxy.mjs'), { args: [upstream.url], nodeArgs }));
    await profiled('toolgate', (nodeArgs) => startGateway(gdir, { nodeArgs }));
  }
} catch (e) {
  console.error(e);
  exitCode = 1;
} finally {
  for (const s of servers.reverse()) await stop(s);
  gdir.cleanup();
}
process.exit(exitCode);
