#!/usr/bin/env node
// The conformance suite's client under test, as toolgate's pool: `conformance client --command
// "node conformance-toolgate.mjs"` starts a test server and runs this with its URL as the last
// argument (env MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_CONTEXT). This starts a toolgate
// (dist/server.js of the repository it lives in) whose tools.d declares that URL as a streamable
// HTTP MCP server (`prefix: ""`), waits until the pool has imported its tools, and does what the
// scenario asks through toolgate: a v1 SDK client on toolgate's /mcp lists and calls the server's
// tools, and answers the elicitations toolgate relays to it. So the suite judges the pool's
// upstream client (its initialize, its calls, its SSE reconnection, its OAuth client credentials).
// Exit 0 when the steps ran; what they did to the server is for the suite to judge.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}');
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const log = (m) => process.stderr.write(`[toolgate-driver] ${m}\n`);

/** What each scenario's server offers, and what the driver then does through toolgate. */
const CALLS = {
  tools_call: [{ name: 'add_numbers', arguments: { a: 5, b: 3 } }],
  'elicitation-sep1034-client-defaults': [{ name: 'test_client_elicitation_defaults', arguments: {} }],
  'sse-retry': [{ name: 'test_reconnection', arguments: {} }],
  'auth/client-credentials-basic': [],
  // conformance 0.2 (alpha) scenarios: the schema toolgate listed, echoed back; the one valid tool among malformed ones.
  'json-schema-2020-12-preservation': [{ name: 'json_schema_echo', arguments: (tools) => ({ schema: tools.get('json_schema_2020_12_tool')?.inputSchema }) }],
  'http-invalid-tool-headers': [{ name: 'valid_tool', arguments: { region: 'us-west1' } }],
};

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

const json = async (res) => (res.ok ? res.json() : Promise.reject(new Error(`${res.url}: ${res.status}`)));

/**
 * The token endpoint an operator would write into the server file (toolgate's clientCredentials
 * takes a configured tokenUrl, it does no discovery): found as a client would, from the server's
 * 401 (RFC 9728 resource metadata) and the authorization server's metadata (RFC 8414).
 */
async function tokenEndpoint() {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
  const prm = /resource_metadata="([^"]+)"/.exec(res.headers.get('www-authenticate') ?? '')?.[1] ?? new URL('/.well-known/oauth-protected-resource', url).href;
  const as = (await json(await fetch(prm))).authorization_servers?.[0];
  if (!as) throw new Error('no authorization server in the resource metadata');
  const u = new URL(as);
  const meta = await json(await fetch(new URL(`/.well-known/oauth-authorization-server${u.pathname === '/' ? '' : u.pathname}`, u)));
  return meta.token_endpoint;
}

async function serverFile() {
  const file = { kind: 'mcp-server', name: 'upstream', prefix: '', transport: 'streamable-http', url, prestart: true };
  // The scenarios' tools are unannotated (destructive by MCP's defaults): no confirmation step here.
  file.overrides = Object.fromEntries(Object.values(CALLS).flat().map((c) => [c.name, { confirm: false }]));
  if (scenario === 'auth/client-credentials-basic') {
    file.credentials = { clientCredentials: { tokenUrl: await tokenEndpoint(), clientId: context.client_id, clientSecret: '${env:CONF_CLIENT_SECRET}', authMethod: 'client_secret_basic' } };
  }
  return file;
}

async function startToolgate() {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-conf-client-'));
  mkdirSync(join(dir, 'tools.d'));
  writeFileSync(join(dir, 'tools.d', 'upstream.yaml'), JSON.stringify(await serverFile()));
  writeFileSync(join(dir, 'gateway.yaml'), JSON.stringify({ auth: { mode: 'none' }, audit: { file: join(dir, 'audit.jsonl') }, tools: { dir: join(dir, 'tools.d') } }));
  const port = await freePort();
  const child = spawn(process.execPath, [join(REPO, 'dist/server.js')], {
    cwd: REPO,
    env: { ...process.env, TOOLGATE_CONFIG: join(dir, 'gateway.yaml'), PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', CONF_CLIENT_SECRET: context.client_secret ?? '' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  const stop = () => {
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 45_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`toolgate exited ${child.exitCode}`);
    const ready = await fetch(`${base}/readyz`).then((r) => r.ok, () => false);
    if (ready) return { base, stop };
    if (Date.now() > deadline) {
      stop();
      throw new Error('toolgate did not become ready');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A v1 SDK client on toolgate's /mcp that accepts every elicitation with the form's defaults (SEP-1034, the SDK applies them). */
async function downstream(base) {
  const client = new Client({ name: 'conformance-via-toolgate', version: '1.0.0' }, { capabilities: { elicitation: { form: { applyDefaults: true } } } });
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: {} }));
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
  return client;
}

let gate;
const timer = setTimeout(() => {
  log('timed out');
  gate?.stop();
  process.exit(3);
}, 85_000);
try {
  gate = await startToolgate();
  const client = await downstream(gate.base);
  const wanted = (CALLS[scenario] ?? []).map((c) => c.name);
  // Readiness waits for a prestarted server's import; a listing that lacks a tool is waited out a little (reconnects).
  let names = [];
  let tools = new Map();
  for (let i = 0; i < 50; i++) {
    tools = new Map((await client.listTools()).tools.map((t) => [t.name, t]));
    names = [...tools.keys()];
    if (wanted.every((n) => names.includes(n))) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  log(`tools via toolgate: ${names.join(', ') || '(none)'}`);
  for (const c of CALLS[scenario] ?? []) {
    const r = await client.callTool({ name: c.name, arguments: typeof c.arguments === 'function' ? c.arguments(tools) : c.arguments });
    log(`${c.name} → ${r.isError ? 'error: ' : ''}${(r.content ?? []).map((x) => x.text ?? '').join(' ')}`);
  }
  await client.close();
} catch (e) {
  log(`failed: ${e?.stack ?? e}`);
  process.exitCode = 1;
} finally {
  clearTimeout(timer);
  gate?.stop();
}
