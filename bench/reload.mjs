#!/usr/bin/env node
// Hot reload of tools.d, measured on the compiled gateway (dist/):
//   write → callable   time from writing a changed tool file to the first call that sees the
//                      change (the watcher on, default 100 ms debounce), median and p90 over
//                      --writes writes; once in a small tools.d and once beside --files others
//   cold load          loadToolsDir() of --files tool files, no previous generation (median of 3)
//   warm reload        the same directory again with the previous generation (nothing changed)
//
//   npm run build && node bench/reload.mjs [--writes 30] [--files 5000] [--load-only] [--dist DIR]
//
// Prints a markdown table and one JSON line for baselines. Targets: write → callable < 500 ms
// (median), cold load of 5,000 files < 2 s.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { flag, has } from './lib/args.mjs';
import { median } from './lib/stats.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const writes = Number(flag('--writes', '30'));
const files = Number(flag('--files', '5000'));
const distDir = resolve(flag('--dist', `${root}dist`));
const loadOnly = has('--load-only');
if (!existsSync(`${distDir}/app.js`)) {
  console.error(`No compiled gateway at ${distDir}: run \`npm run build\` first.`);
  process.exit(2);
}
const { buildApp } = await import(pathToFileURL(`${distDir}/app.js`).href);
const { loadConfig } = await import(pathToFileURL(`${distDir}/config/load.js`).href);
const { loadToolsDir } = await import(pathToFileURL(`${distDir}/tools/loader.js`).href);
const { OpenApiBook } = await import(pathToFileURL(`${distDir}/tools/openapi/book.js`).href);

const nullSink = { write() {}, durable: async () => {}, flush: async () => {}, close: async () => {} };

/** A realistic tool file: description, examples, an input schema of its own with a few typed properties. */
function toolYaml(name, marker = 'v0') {
  const n = name.replace(/\W/g, '_');
  return `name: ${name}
description: >
  Bench tool ${name}. Returns its arguments; used to time reloads of tools.d.
tags: [bench]
examples: ["run ${name}"]
inputSchema:
  type: object
  required: [message]
  properties:
    message: { type: string, maxLength: 200 }
    ${n}_count: { type: integer, minimum: 0, maximum: 100 }
    ${n}_mode: { type: string, enum: [fast, slow, ${n}] }
sideEffect: none
result: { text: "${marker}: {{message}}" }
backends:
  - id: b
    builtin: echo
`;
}

function fill(dir, n) {
  for (let i = 0; i < n; i++) writeFileSync(join(dir, `t${String(i).padStart(5, '0')}.yaml`), toolYaml(`bench.t${i}`));
}

const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.9))];

/** Median and p90 ms from writing bench.target's file to a call answering with the new marker. */
async function writeToCallable(others) {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-'));
  const tools = join(dir, 'tools.d');
  mkdirSync(tools);
  fill(tools, others);
  const target = join(tools, 'target.yaml');
  writeFileSync(target, toolYaml('bench.target', 'v0'));
  const configFile = join(dir, 'gateway.yaml');
  writeFileSync(configFile, JSON.stringify({ tools: { dir: tools, watch: true } }));
  const app = await buildApp({ loaded: loadConfig({ file: configFile, env: {} }), env: {}, audit: nullSink, logger: false });
  const call = async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/tools/bench.target/call', payload: { arguments: { message: 'hi' } } });
    return res.statusCode === 200 ? res.json().result.content[0].text : '';
  };
  const samples = [];
  for (let i = 1; i <= writes; i++) {
    const marker = `v${i}`;
    const started = performance.now();
    writeFileSync(target, toolYaml('bench.target', marker));
    const deadline = started + 10_000;
    while ((await call()) !== `${marker}: hi`) {
      if (performance.now() > deadline) throw new Error(`write ${i} never became callable`);
      await new Promise((r) => setTimeout(r, 2));
    }
    samples.push(performance.now() - started);
    // Let the debounce window close so each write is its own burst.
    await new Promise((r) => setTimeout(r, 150));
  }
  await app.close();
  rmSync(dir, { recursive: true, force: true });
  return { median: median(samples), p90: p90(samples) };
}

/** What loadToolsDir() needs for `dir`, with the config's defaults (an empty config file). */
function loadContext(dir) {
  const configFile = join(tmpdir(), `toolgate-bench-${process.pid}.json`);
  writeFileSync(configFile, '{}');
  const defaults = loadConfig({ file: configFile, env: {} }).config.defaults;
  rmSync(configFile);
  return { dir, env: {}, secrets: new Set(), defaults };
}

async function loadTimes(n) {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-'));
  fill(dir, n);
  const ctx = loadContext(dir);
  const cold = [];
  const warm = [];
  let reg;
  for (let i = 0; i < 3; i++) {
    let t = performance.now();
    reg = await loadToolsDir(ctx);
    cold.push(performance.now() - t);
    if (reg.size !== n) throw new Error(`loaded ${reg.size} of ${n} tools: ${JSON.stringify(reg.problems.slice(0, 3))}`);
    t = performance.now();
    await loadToolsDir(ctx, reg);
    warm.push(performance.now() - t);
  }
  rmSync(dir, { recursive: true, force: true });
  return { cold: median(cold), warm: median(warm) };
}

/**
 * The same cold load with a large real OpenAPI document beside the files (issue 25: import time
 * "included in the cold-load bench"): GitHub's REST description, 1,223 operations, as a kind:
 * openapi file. Warm: the gateway's long-lived book keeps the parsed document and its tools.
 */
async function loadTimesWithDocument(n) {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-'));
  fill(dir, n);
  mkdirSync(join(dir, 'specs'));
  writeFileSync(join(dir, 'specs', 'github.json'), gunzipSync(readFileSync(join(root, 'test/fixtures/openapi/github-rest-3.0.json.gz'))));
  writeFileSync(join(dir, 'github.yaml'), 'kind: openapi\nname: github\nspec: ./specs/github.json\nbaseUrl: "http://127.0.0.1:9"\n');
  const ctx = loadContext(dir);
  const cold = [];
  let reg;
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    reg = await loadToolsDir(ctx);
    cold.push(performance.now() - t);
  }
  const operations = reg.size - n;
  const book = new OpenApiBook();
  const first = await loadToolsDir({ ...ctx, openapi: book });
  const t = performance.now();
  await loadToolsDir({ ...ctx, openapi: book }, first);
  const warm = performance.now() - t;
  book.close();
  rmSync(dir, { recursive: true, force: true });
  return { cold: median(cold), warm, operations };
}

const ms = (x) => `${x.toFixed(0)} ms`;
const small = loadOnly ? { median: NaN, p90: NaN } : await writeToCallable(5);
const large = loadOnly ? { median: NaN, p90: NaN } : await writeToCallable(Math.min(files, 1000));
const load = await loadTimes(files);
const withDocument = await loadTimesWithDocument(files);

console.log(`| measure | result | target |`);
console.log(`| --- | --- | --- |`);
console.log(`| write → callable, 6 tools (median / p90 of ${writes}) | ${ms(small.median)} / ${ms(small.p90)} | < 500 ms median |`);
console.log(`| write → callable, ${Math.min(files, 1000) + 1} tools (median / p90 of ${writes}) | ${ms(large.median)} / ${ms(large.p90)} | < 500 ms median |`);
console.log(`| cold load, ${files} files | ${ms(load.cold)} | < 2000 ms |`);
console.log(`| warm reload, ${files} files unchanged | ${ms(load.warm)} | |`);
console.log(`| cold load, ${files} files + GitHub's OpenAPI document (${withDocument.operations} operations) | ${ms(withDocument.cold)} | |`);
console.log(`| warm reload, the same, unchanged | ${ms(withDocument.warm)} | |`);
console.log(JSON.stringify({ bench: 'reload', writes, files, small, large, load, withDocument }));
