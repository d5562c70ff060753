import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { stringify } from 'yaml';
import { runCheck } from '../../src/cli/run.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { TestGateway } from '../helpers/app.js';
import { askedClient, callTool, textOf } from '../helpers/asking.js';
import { rawMcpSession } from '../helpers/mcp-raw.js';
import { listAllResources, startPassthroughGateway, type Era, type PassthroughGateway } from '../helpers/passthrough.js';
import { EVERYTHING, FILESYSTEM } from '../helpers/processes.js';
import { untilAsync } from '../helpers/wait.js';

// The "Bad input" list against the passthrough, with real servers (server-everything,
// server-filesystem, the fixtures passthrough-server.mjs and late-sampler-server.mjs): each is
// refused with the specification's error, audited where it reached a server, sent to no server
// it does not belong to (every message the pool sends is traced), and reaches no other caller.
// Last, two servers without prefix giving one name: `toolgate check --connect` reports the clash.

const ALICE = 'prt-alice-key-00000001';
const BOB = 'prt-bob-key-000000002';
const node = process.execPath;
const FIXTURE = fileURLToPath(new URL('../fixtures/mcp/passthrough-server.mjs', import.meta.url));
const LATE = fileURLToPath(new URL('../fixtures/mcp/late-sampler-server.mjs', import.meta.url));
const INVALID_PARAMS = -32602;
/**
 * The spec's "resource not found": -32002 on the 2025 wire, -32602 in 2026-07-28; the v2 SDK client
 * reads both as its ResourceNotFoundError (code -32602). A dot segment is invalid params.
 */
const notFound = (_era: Era) => ({ code: INVALID_PARAMS, message: expect.stringContaining('Resource not found') });
const dotSegment = { code: INVALID_PARAMS, message: expect.stringContaining('dot segment') };
const gw_ = (prefix: string, uri: string) => `toolgate://${prefix}/${encodeURIComponent(uri)}`;
const DOC = 'demo://resource/static/document/how-it-works.md';

describe('passthrough red team', () => {
  let gw: TestGateway;
  let base = '';
  let root = '';
  let lateLog = '';
  const sent: { server: string; message: Record<string, unknown> }[] = [];
  let t: PassthroughGateway | undefined;
  const clients = { connect: (era: Era, key: string) => t!.clients.connect(era, key) };
  const extra: Client[] = [];
  /** What the pool sent to a server since `from` (a mark from `mark()`), by method. */
  const mark = () => sent.length;
  const sentSince = (from: number, method: string) => sent.slice(from).filter((s) => s.message['method'] === method);
  const uriOf = (s: { message: Record<string, unknown> }) => (s.message['params'] as { uri?: string } | undefined)?.uri;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'toolgate-prt-root-'));
    writeFileSync(join(root, 'inside.txt'), 'inside');
    lateLog = join(mkdtempSync(join(tmpdir(), 'toolgate-prt-late-')), 'late.jsonl');
    t = await startPassthroughGateway({
      config: {
        auth: { keys: [{ id: 'alice', key: ALICE, roles: ['agent'] }, { id: 'bob', key: BOB, roles: ['agent'] }] },
        mcp: { resources: { maxSubscriptionsPerSession: 3 } },
      },
      tools: {
        'ev.yaml': { kind: 'mcp-server', name: 'ev', transport: 'stdio', command: node, args: [EVERYTHING, 'stdio'], prestart: true },
        'files.yaml': { kind: 'mcp-server', name: 'files', transport: 'stdio', command: node, args: [FILESYSTEM, root], prestart: true },
        'fx.yaml': { kind: 'mcp-server', name: 'fx', prefix: '', transport: 'stdio', command: node, args: [FIXTURE], prestart: true },
        'late.yaml': { kind: 'mcp-server', name: 'late', transport: 'stdio', command: node, args: [LATE, lateLog], prestart: true },
      },
      mcpTrace: (server, direction, message) => {
        if (direction === 'out') sent.push({ server, message: message as Record<string, unknown> });
      },
    }, 'prt-test');
    ({ gw, base } = t);
  }, 60000);
  afterAll(async () => {
    await Promise.all(extra.map((c) => c.close().catch(() => undefined)));
    await t?.close();
  });

  const reads = async (uri: string) => (await gw.audit()).filter((r) => r['mcpMethod'] === 'resources/read' && r['uri'] === uri);

  for (const era of ['legacy', 'modern'] as const) {
    it(`${era}: dot segments (../, %2e%2e, twice encoded) and server-filesystem's file:// root escape are refused; no server is asked`, async () => {
      const c = await clients.connect(era, ALICE);
      const from = mark();
      const bad: [string, { code: number }][] = [
        [gw_('ev', 'demo://resource/static/document/../../../etc/passwd'), dotSegment],
        [`toolgate://ev/demo%3A%2F%2Fresource%2Fdynamic%2Ftext%2F%252e%252e`, dotSegment],
        ['fixture://%2e%2e/%2E%2E/note', dotSegment],
        ['demo://resource/static/document/../how-it-works.md', dotSegment],
        [gw_('files', `file://${root}/../../etc/passwd`), dotSegment],
        [gw_('files', `file://${root}/%2e%2e/%2e%2e/etc/passwd`), dotSegment],
        [gw_('files', 'file:///etc/passwd'), notFound(era)], // server-filesystem serves no resources: nothing to route to
        [gw_('files', `file://${root}/inside.txt`), notFound(era)],
        ['file:///etc/passwd', notFound(era)],
      ];
      for (const [uri, code] of bad) {
        await expect(c.readResource({ uri }, { cacheMode: 'bypass' }), uri).rejects.toMatchObject(code);
        expect(await reads(uri), uri).toEqual([]);
      }
      if (era === 'legacy') {
        await expect(c.subscribeResource({ uri: bad[0]![0] })).rejects.toMatchObject(notFound(era));
        expect(sentSince(from, 'resources/subscribe')).toEqual([]);
      }
      await expect(c.complete({ ref: { type: 'ref/resource', uri: gw_('ev', 'demo://resource/dynamic/text/../{resourceId}') }, argument: { name: 'resourceId', value: '' } })).rejects.toMatchObject({ code: INVALID_PARAMS });
      expect(sentSince(from, 'resources/read')).toEqual([]);
      expect(sentSince(from, 'completion/complete')).toEqual([]);
    });

    it(`${era}: a URI of another server's scheme or prefix is not found and goes to no server; a template URI goes to its owner only, audited`, async () => {
      const c = await clients.connect(era, ALICE);
      const from = mark();
      for (const uri of [gw_('ev', 'fixture://note'), DOC, gw_('files', DOC), gw_('fx', 'fixture://note'), 'toolgate://nosuch/x', 'toolgate:ev/x']) {
        await expect(c.readResource({ uri }, { cacheMode: 'bypass' }), uri).rejects.toMatchObject(notFound(era));
      }
      expect(sentSince(from, 'resources/read')).toEqual([]);
      // A URI expanded from ev's listed template is ev's, with the value as the client encoded it.
      const id = era === 'legacy' ? '1' : '2'; // each era's own records
      const ok = gw_('ev', `demo://resource/dynamic/text/${id}`);
      expect((await c.readResource({ uri: ok }, { cacheMode: 'bypass' })).contents[0]?.uri).toBe(ok);
      // A value the server refuses reached it: its error comes back, and is audited.
      const refused = `${gw_('ev', 'demo://resource/dynamic/text/')}not-a-number-${era}`;
      const err = await c.readResource({ uri: refused }, { cacheMode: 'bypass' }).catch((e: { code: number }) => e);
      expect(err).toMatchObject({ code: expect.any(Number) });
      const toEv = sentSince(from, 'resources/read');
      expect(toEv.map((s) => [s.server, uriOf(s)])).toEqual([['ev', `demo://resource/dynamic/text/${id}`], ['ev', `demo://resource/dynamic/text/not-a-number-${era}`]]);
      expect(await reads(ok)).toEqual([expect.objectContaining({ caller: 'alice', server: 'ev', upstreamUri: `demo://resource/dynamic/text/${id}`, outcome: 'ok' })]);
      expect(await reads(refused)).toEqual([expect.objectContaining({ caller: 'alice', server: 'ev', outcome: 'error', errorCode: expect.stringMatching(/^MCP_-?\d+$|^UNAVAILABLE$/) })]);
    });

    it(`${era}: a prompt that does not exist (or another server's under a prefix) and a completion for an unknown argument are -32602 and reach no server`, async () => {
      const c = await clients.connect(era, ALICE);
      const from = mark();
      for (const name of ['ev.nope', 'ev.fixture-prompt', 'fx.fixture-prompt', 'nope', '../ev.simple-prompt']) {
        await expect(c.getPrompt({ name }), name).rejects.toMatchObject({ code: INVALID_PARAMS });
      }
      await expect(c.complete({ ref: { type: 'ref/prompt', name: 'ev.completable-prompt' }, argument: { name: 'nope', value: '' } })).rejects.toMatchObject({ code: INVALID_PARAMS });
      await expect(c.complete({ ref: { type: 'ref/prompt', name: 'ev.nope' }, argument: { name: 'department', value: '' } })).rejects.toMatchObject({ code: INVALID_PARAMS });
      await expect(c.complete({ ref: { type: 'ref/resource', uri: gw_('ev', 'demo://resource/dynamic/text/{resourceId}').replace('%7BresourceId%7D', '{resourceId}') }, argument: { name: 'nope', value: '' } })).rejects.toMatchObject({ code: INVALID_PARAMS });
      expect(sentSince(from, 'prompts/get')).toEqual([]);
      expect(sentSince(from, 'completion/complete')).toEqual([]);
      const prompts = (await gw.audit()).filter((r) => r['mcpMethod'] === 'prompts/get' && String(r['prompt']).includes('nope'));
      expect(prompts).toEqual([]); // reached no server: nothing to audit
      // A completion of a URI expanded from a template goes to that template's server.
      const done = await c.complete({ ref: { type: 'ref/resource', uri: gw_('ev', 'demo://resource/dynamic/text/1') }, argument: { name: 'resourceId', value: '1' } });
      expect(done.completion.values.length).toBeGreaterThan(0);
      expect(sentSince(from, 'completion/complete').map((s) => s.server)).toEqual(['ev']);
    });
  }

  it('a subscription flood is bounded per session, not across sessions; a session that ends (DELETE, eviction) releases what it held upstream', async () => {
    const docs = (await listAllResources(await clients.connect('legacy', ALICE))).filter((r) => r.uri.startsWith('toolgate://ev/')).slice(0, 5).map((r) => r.uri);
    const own = (uri: string) => decodeURIComponent(uri.slice('toolgate://ev/'.length));
    const a = await clients.connect('legacy', ALICE);
    const b = await clients.connect('legacy', ALICE);
    const from = mark();
    for (const uri of docs.slice(0, 3)) await a.subscribeResource({ uri });
    await expect(a.subscribeResource({ uri: docs[3]! })).rejects.toMatchObject({ code: -32600 });
    await b.subscribeResource({ uri: docs[0]! }); // another session has its own bound; the URI is held upstream once
    expect(sentSince(from, 'resources/subscribe').map(uriOf)).toEqual(docs.slice(0, 3).map(own));

    await (a.transport as StreamableHTTPClientTransport).terminateSession(); // DELETE
    await untilAsync(async () => sentSince(from, 'resources/unsubscribe').length >= 2, 'unsubscribed upstream', 10000);
    expect(sentSince(from, 'resources/unsubscribe').map(uriOf).sort()).toEqual(docs.slice(1, 3).map(own).sort()); // b still holds docs[0]
    await (b.transport as StreamableHTTPClientTransport).terminateSession();
    await untilAsync(async () => sentSince(from, 'resources/unsubscribe').length >= 3, 'the last holder gone', 10000);
    expect(uriOf(sentSince(from, 'resources/unsubscribe')[2]!)).toBe(own(docs[0]!));

    // Eviction: a key opening one session more than it may hold ends its oldest, and what that held.
    const first = await rawMcpSession(base, BOB);
    const sub = await first.post({ jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: docs[4]! } });
    expect(await sub.text()).toContain('"result"');
    const evictFrom = mark();
    for (let i = 0; i < 32; i++) await rawMcpSession(base, BOB);
    await untilAsync(async () => sentSince(evictFrom, 'resources/unsubscribe').length > 0, 'the evicted session released', 10000);
    expect(sentSince(evictFrom, 'resources/unsubscribe').map(uriOf)).toEqual([own(docs[4]!)]);
    expect((await first.post({ jsonrpc: '2.0', id: 2, method: 'resources/list', params: {} })).status).toBe(404);
  }, 60000);

  it('a sampling request from a server with no call in flight is refused with -32601, audited without its prompt, and asks no client', async () => {
    const seenA: string[] = [];
    const seenB: string[] = [];
    const a = await askedClient(base, ALICE, 'legacy', { who: 'a', seen: seenA });
    const b = await askedClient(base, BOB, 'legacy', { who: 'b', seen: seenB });
    extra.push(a, b);
    expect(textOf(await callTool(a, 'late.later', { delayMs: 200 }))).toContain('answered');
    await untilAsync(async () => existsSync(lateLog) && readFileSync(lateLog, 'utf8').trim() !== '', 'the late request answered', 10000);
    expect(JSON.parse(readFileSync(lateLog, 'utf8').trim().split('\n')[0]!)).toMatchObject({ error: { code: -32601 } });
    const rec = (await gw.audit()).filter((r) => r['event'] === 'server_request' && r['backend'] === 'late');
    expect(rec).toEqual([expect.objectContaining({ kind: 'sampling', outcome: 'refused', reason: 'no_call', code: -32601 })]);
    expect(rec[0]?.['caller']).toBeUndefined();
    expect(JSON.stringify(rec)).not.toContain('late secret prompt');
    expect(seenA).toEqual([]);
    expect(seenB).toEqual([]);
  }, 30000);

  it('a forged session id, and one replayed with another key, are 404 -32001 for reads and (un)subscriptions; no server is asked; the owner keeps its subscription', async () => {
    const alice = await clients.connect('legacy', ALICE);
    const uri = gw_('ev', DOC);
    await alice.subscribeResource({ uri });
    const sid = (alice.transport as StreamableHTTPClientTransport).sessionId!;
    const from = mark();
    const post = (key: string, session: string, method: string, params: unknown) =>
      fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${key}`, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
    const forged = `${sid.slice(0, -4)}AAAA`;
    for (const [key, session] of [[ALICE, forged], [BOB, sid]] as const) {
      for (const [method, params] of [['resources/read', { uri }], ['resources/unsubscribe', { uri }], ['resources/subscribe', { uri: gw_('ev', 'demo://resource/static/document/architecture.md') }], ['prompts/get', { name: 'ev.simple-prompt' }]] as const) {
        const res = await post(key, session, method, params);
        expect(res.status, `${method} ${key}`).toBe(404);
        expect(await res.json()).toEqual({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
      }
      const del = await fetch(`${base}/mcp`, { method: 'DELETE', headers: { authorization: `Bearer ${key}`, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } });
      expect(del.status).toBe(404);
    }
    expect(sent.slice(from).map((s) => s.message['method']).filter((m) => typeof m === 'string' && /^(resources|prompts)\//.test(m))).toEqual([]);
    expect((await gw.audit()).filter((r) => r['caller'] === 'bob' && String(r['mcpMethod'] ?? '').match(/^(resources|prompts)\//))).toEqual([]);
    // Alice's session and its subscription are untouched: her own DELETE is what releases it.
    expect((await alice.listResources({}, { cacheMode: 'bypass' })).resources.length).toBeGreaterThan(0);
    await (alice.transport as StreamableHTTPClientTransport).terminateSession();
    await untilAsync(async () => sentSince(from, 'resources/unsubscribe').length > 0, 'released by its owner', 10000);
    expect(sentSince(from, 'resources/unsubscribe').map(uriOf)).toEqual([DOC]);
  }, 30000);
});

describe('toolgate check --connect: servers without prefix that clash', () => {
  it('reports a URI and a prompt name two such servers give as errors of the later file; the first has none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-prt-check-'));
    // server-everything and the fixture both give demo://resource/static/document/architecture.md and simple-prompt.
    writeFileSync(join(dir, 'a-ev.yaml'), stringify({ kind: 'mcp-server', name: 'ev', prefix: '', transport: 'stdio', command: node, args: [EVERYTHING, 'stdio'] }));
    writeFileSync(join(dir, 'b-fx.yaml'), stringify({ kind: 'mcp-server', name: 'fx', prefix: '', transport: 'stdio', command: node, args: [FIXTURE] }));
    const report = await runCheck({ toolsDir: dir, env: {}, connectTimeoutMs: 10000 });
    expect(report.ok).toBe(false);
    expect(report.errors.filter((e) => e.file.endsWith('a-ev.yaml'))).toEqual([]);
    expect(report.errors.filter((e) => e.file.endsWith('b-fx.yaml')).map((e) => e.message).sort()).toEqual([
      expect.stringContaining("prompt 'simple-prompt' clashes with the one MCP server 'ev'"),
      expect.stringContaining("resource 'demo://resource/static/document/architecture.md' clashes with the one MCP server 'ev'"),
    ]);
  }, 30000);
});
