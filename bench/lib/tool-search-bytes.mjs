// The bytes of /mcp's tools/list with and without the tool-search mode (mcp.toolSearch), for
// bench/prefilter.mjs: the compiled gateway (dist/) in process, listening on 127.0.0.1, asked over
// real MCP (2025-11-25 Streamable HTTP, raw JSON-RPC) by two keys of one gateway, one with the mode
// off (`toolSearch: { enabled: false }`), one with it on (k 5). Each figure is the JSON-RPC answer
// as sent (the SSE event's data), in bytes of UTF-8.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { stringify } from 'yaml';

const KEYS = { off: 'bench-toolsearch-off-0001', on: 'bench-toolsearch-on-00002' };

/**
 * `n` tools made of the dev set's descriptions (cycled, distinct names), each with a small input
 * schema of three documented parameters, as real tools have (the dev tools have none).
 */
function toolFiles(devTools, n) {
  const files = {};
  for (let i = 0; i < n; i++) {
    const t = devTools[i % devTools.length];
    const base = t.id.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().replace(/[^a-z0-9_]+/g, '_');
    files[`t${i}.yaml`] = stringify({
      name: `bench.${base}_${i}`,
      description: t.description,
      sideEffect: 'none',
      inputSchema: {
        type: 'object',
        required: ['query'],
        properties: {
          query: { type: 'string', maxLength: 500, description: 'what to look up, in the words of the request' },
          limit: { type: 'integer', minimum: 1, maximum: 50, description: 'how many results to return at most' },
          format: { type: 'string', enum: ['text', 'json'], description: 'the shape of the answer' },
        },
      },
      backends: [{ id: 'b', builtin: 'echo' }],
    });
  }
  return files;
}

/** One MCP 2025 session over HTTP: its JSON-RPC answers as the bytes sent. */
async function session(url, key) {
  let id;
  let next = 1;
  const post = async (body) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(id ? { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' } : {}),
      },
      body: JSON.stringify(body),
    });
    id ??= res.headers.get('mcp-session-id') ?? undefined;
    const text = await res.text();
    if (body.id === undefined) return undefined;
    // An SSE answer: the response is the data of the event with our id (notifications may come first).
    const datas = res.headers.get('content-type')?.startsWith('text/event-stream')
      ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6))
      : [text];
    const raw = datas.find((d) => JSON.parse(d).id === body.id);
    return { bytes: Buffer.byteLength(raw, 'utf8'), message: JSON.parse(raw) };
  };
  const request = (method, params = {}) => post({ jsonrpc: '2.0', id: next++, method, params });
  await request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return { request, close: () => fetch(url, { method: 'DELETE', headers: { authorization: `Bearer ${key}`, 'mcp-session-id': id } }) };
}

/** { tools, k, plain, searchMode, afterSearch, findResult, listed } for `n` tools; `query` is the search made. */
export async function toolSearchBytes({ distDir, devTools, n = 500, query }) {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-search-'));
  const toolsDir = join(dir, 'tools.d');
  mkdirSync(toolsDir);
  for (const [file, text] of Object.entries(toolFiles(devTools, n))) writeFileSync(join(toolsDir, file), text);
  const configFile = join(dir, 'gateway.yaml');
  writeFileSync(configFile, stringify({
    auth: { keys: [{ id: 'off', key: KEYS.off, toolSearch: { enabled: false } }, { id: 'on', key: KEYS.on }] },
    audit: { file: join(dir, 'audit.jsonl') },
    tools: { dir: toolsDir, watch: false },
    mcp: { toolSearch: { enabled: true, k: 5 } },
  }));
  const { buildApp } = await import(pathToFileURL(join(distDir, 'app.js')).href);
  const { loadConfig } = await import(pathToFileURL(join(distDir, 'config/load.js')).href);
  const app = await buildApp({ loaded: loadConfig({ file: configFile, env: {} }), env: {}, logger: false });
  try {
    const url = `${await app.listen({ port: 0, host: '127.0.0.1' })}/mcp`;
    const off = await session(url, KEYS.off);
    const plain = await off.request('tools/list');
    const on = await session(url, KEYS.on);
    const before = await on.request('tools/list');
    const found = await on.request('tools/call', { name: 'find_tools', arguments: { query } });
    const after = await on.request('tools/list');
    await Promise.all([off.close(), on.close()]);
    if (plain.message.result.tools.length !== n) throw new Error(`expected ${n} tools listed, got ${plain.message.result.tools.length}`);
    return {
      tools: n,
      k: 5,
      plain: plain.bytes,
      searchMode: before.bytes,
      afterSearch: after.bytes,
      findResult: found.bytes,
      listed: after.message.result.tools.length,
    };
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
