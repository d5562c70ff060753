#!/usr/bin/env node
// The cost of a JWT access token against an API key (issue 23: at most 10 µs more CPU per call,
// verification cached per token). Two measurements, side by side in this run:
//   HTTP       one gateway (dist/server.js, a child process) with an API key and a trusted issuer
//              (a tiny JWKS server in this process); POST /v1/tools/bench.echo/call loaded by
//              autocannon in alternated slices, once with the key and once with one JWT (verified on
//              the first call, cached after); the CPU time of the gateway process (/proc/<pid>/stat)
//              per request, and the difference per cycle (jwt − key), median over the cycles.
//   in process the Authenticator alone (dist/auth/authenticator.js): resolve() of the key header and
//              of the cached token header, N times each, CPU by process.cpuUsage; per call and the
//              difference. This isolates the part a token adds (the HTTP figure carries the noise of
//              a whole request on a shared 2-core machine).
//
//   npm run build && node bench/oidc-auth.mjs [--connections 16] [--cycles 15] [--slice 2] [--warmup 2] [--calls 1000000]
//
// Prints a markdown table and one JSON line. Target: jwt − key ≤ 10 µs CPU per call.
import { createServer } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { request } from 'undici';
import { benchEchoTool, makeGatewayDir, requireDist, root, startGateway } from './lib/gateway.mjs';
import { load, median } from './lib/load.mjs';
import { cpuMs, stop } from './lib/proc.mjs';
import { flag } from './lib/args.mjs';

const connections = Number(flag('--connections', '16'));
const cycles = Number(flag('--cycles', '15'));
const slice = Number(flag('--slice', '2'));
const warmup = Number(flag('--warmup', '2'));
const calls = Number(flag('--calls', '1000000'));
const TARGET_US = 10;
requireDist();

// The issuer: one RS256 key, discovery and JWKS on 127.0.0.1.
const { privateKey, publicKey } = await generateKeyPair('RS256');
const jwk = { ...(await exportJWK(publicKey)), kid: 'bench-1', alg: 'RS256', use: 'sig' };
let jwksFetches = 0;
const idp = createServer((req, res) => {
  const body = req.url === '/jwks' ? (jwksFetches++, { keys: [jwk] }) : req.url === '/.well-known/openid-configuration' ? { issuer: idpUrl, jwks_uri: `${idpUrl}/jwks` } : undefined;
  res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(body ?? {}));
});
await new Promise((r) => idp.listen(0, '127.0.0.1', r));
const idpUrl = `http://127.0.0.1:${idp.address().port}`;
const audience = 'https://toolgate.bench';
const now = Math.floor(Date.now() / 1000);
const token = await new SignJWT({ iss: idpUrl, aud: audience, sub: 'bench-user', iat: now, exp: now + 3600, tools: ['bench.*'], roles: ['agent'] })
  .setProtectedHeader({ alg: 'RS256', kid: 'bench-1', typ: 'at+jwt' })
  .sign(privateKey);

const upstream = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"text":"hello from the upstream"}'));
});
await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
const upstreamUrl = `http://127.0.0.1:${upstream.address().port}`;

const gdir = makeGatewayDir({
  'bench-echo.yaml': benchEchoTool('Bench tool.', `  - id: upstream\n    http: { method: POST, url: "${upstreamUrl}/echo", body: "{{arguments}}" }\n`),
});
// The bench gateway's config, plus the issuer (audience given, keys from discovery).
const oidc = `  oidc:\n    - issuer: "${idpUrl}"\n      audience: "${audience}"\n      algorithms: [RS256]\n`;
writeFileSync(gdir.configFile, readFileSync(gdir.configFile, 'utf8').replace('auth:\n', `auth:\n${oidc}`));

let gw;
let exitCode = 0;
try {
  gw = await startGateway(gdir);
  const url = `${gw.url}/v1/tools/bench.echo/call`;
  const body = JSON.stringify({ arguments: { message: 'hello', count: 3 } });
  const targets = [
    { id: 'key', label: 'API key', headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}` } },
    { id: 'jwt', label: 'JWT access token (cached after its first call)', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` } },
  ];
  for (const t of targets) {
    const res = await request(url, { method: 'POST', headers: t.headers, body });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${t.id}: ${res.statusCode} ${text}`);
  }
  for (const t of targets) await load({ url, method: 'POST', headers: t.headers, body, connections, duration: warmup });
  const per = { key: [], jwt: [] };
  for (let i = 0; i < cycles; i++) {
    process.stderr.write(`oidc-auth: cycle ${i + 1}/${cycles}…\n`);
    for (const t of i % 2 === 0 ? targets : [...targets].reverse()) {
      const cpu0 = cpuMs(gw.pid);
      const x = await load({ url, method: 'POST', headers: t.headers, body, connections, duration: slice });
      if (x.non2xx + x.errors > 0) throw new Error(`${t.id}: ${x.non2xx} non-2xx, ${x.errors} errors`);
      per[t.id].push({ cpuUs: ((cpuMs(gw.pid) - cpu0) * 1000) / x.requests, rps: x.rps, p50: x.p50 });
    }
  }
  const diffs = per.key.map((k, i) => per.jwt[i].cpuUs - k.cpuUs);
  const http = {
    key: { cpuUs: median(per.key.map((x) => x.cpuUs)), rps: median(per.key.map((x) => x.rps)), p50: median(per.key.map((x) => x.p50)) },
    jwt: { cpuUs: median(per.jwt.map((x) => x.cpuUs)), rps: median(per.jwt.map((x) => x.rps)), p50: median(per.jwt.map((x) => x.p50)) },
    diffUs: median(diffs),
  };

  // In process: the Authenticator of the same config, its token cached by one verification.
  const { Authenticator } = await import(pathToFileURL(join(root, 'dist/auth/authenticator.js')).href);
  const issuer = { issuer: idpUrl, audience, algorithms: ['RS256'], clockSkewSeconds: 30, jwksRefreshCooldownSeconds: 30, fetchTimeoutMs: 5000, claims: { id: 'sub', roles: 'roles', tools: 'tools' }, defaultRoles: ['agent'], defaultTools: [] };
  const auth = new Authenticator({ server: {}, auth: { mode: 'keys', keys: [{ id: 'bench', key: gw.key, roles: ['agent'], tools: ['*'] }], oidc: [issuer] } });
  const keyHeader = `Bearer ${gw.key}`;
  const jwtHeader = `Bearer ${token}`;
  const first = await auth.resolve(jwtHeader);
  if (first.id !== 'bench-user') throw new Error('in-process token did not verify');
  const cpuPerCall = (header) => {
    let sink = 0;
    const t0 = process.cpuUsage();
    for (let i = 0; i < calls; i++) sink += auth.resolve(header).id.length;
    const d = process.cpuUsage(t0);
    if (sink === 0) throw new Error('unreachable');
    return (d.user + d.system) / calls;
  };
  cpuPerCall(keyHeader);
  cpuPerCall(jwtHeader); // warm both paths
  const inKey = [];
  const inJwt = [];
  for (let i = 0; i < 5; i++) {
    inKey.push(cpuPerCall(keyHeader));
    inJwt.push(cpuPerCall(jwtHeader));
  }
  const inProcess = { keyUs: median(inKey), jwtUs: median(inJwt), diffUs: median(inJwt.map((j, i) => j - inKey[i])), tokenChars: token.length };

  const met = { http: http.diffUs <= TARGET_US, inProcess: inProcess.diffUs <= TARGET_US };
  const ok = (b) => (b ? 'met' : '**missed**');
  const us = (x, d = 1) => `${x.toFixed(d)} µs`;
  console.log('| measure | API key | JWT (cached) | JWT − key | target |');
  console.log('| --- | --- | --- | --- | --- |');
  console.log(`| gateway CPU per HTTP call, ${connections} connections | ${us(http.key.cpuUs)} | ${us(http.jwt.cpuUs)} | ${http.diffUs >= 0 ? '+' : ''}${us(http.diffUs)} | ≤ ${TARGET_US} µs (${ok(met.http)}) |`);
  console.log(`| requests/s, ${connections} connections | ${Math.round(http.key.rps).toLocaleString('en-US')} | ${Math.round(http.jwt.rps).toLocaleString('en-US')} | | |`);
  console.log(`| p50 latency | ${http.key.p50.toFixed(2)} ms | ${http.jwt.p50.toFixed(2)} ms | | |`);
  console.log(`| Authenticator.resolve CPU per call, in process | ${us(inProcess.keyUs, 2)} | ${us(inProcess.jwtUs, 2)} | ${inProcess.diffUs >= 0 ? '+' : ''}${us(inProcess.diffUs, 2)} | ≤ ${TARGET_US} µs (${ok(met.inProcess)}) |`);
  const spread = [...diffs].sort((a, b) => a - b);
  console.log(
    `\nOne gateway process with one API key and one trusted issuer (RS256, keys from discovery); the same tool call (an HTTP backend on 127.0.0.1) with the key or with one ${token.length}-character JWT, ` +
      `${cycles} cycles of ${slice} s slices alternated after ${warmup} s warm-up each; the HTTP difference is the median of each cycle's own (spread ${us(spread[0])} – ${us(spread[spread.length - 1])}). ` +
      `The JWKS was fetched ${jwksFetches} time(s) in all. In process: ${calls.toLocaleString('en-US')} resolve() calls per path, 5 rounds, medians; the token path is the key path plus one cache lookup (the hash of the bearer value is made once for both).`,
  );
  console.log(JSON.stringify({ bench: 'oidc-auth', cores: cpus().length, connections, cycles, slice, http, inProcess, diffs, jwksFetches, targetUs: TARGET_US, met }));
} catch (e) {
  console.error(e);
  exitCode = 1;
} finally {
  if (gw) await stop(gw);
  gdir.cleanup();
  idp.close();
  upstream.close();
}
process.exit(exitCode);
