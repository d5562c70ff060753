import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { Upstream, json } from '../helpers/upstream.js';

/** kind: openapi with `backends:`: each operation one backend per entry, routed like a tool file's (real gateway, two real upstreams). */

const KEYS = { agent: 'agent-key-0123456789', admin: 'admin-key-0123456789' };
const DOC = stringify({
  openapi: '3.1.0',
  info: { title: 'items', version: '1' },
  paths: {
    '/items': {
      get: { operationId: 'listItems', responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } } },
      post: { operationId: 'createItem', requestBody: { content: { 'application/json': { schema: { type: 'object' } } } }, responses: { '201': { description: 'ok' } } },
    },
  },
});
// Small breakers, no backoff: a failing backend opens after two failures.
const BREAKER = { breaker: { failureThreshold: 2, resetTimeoutMs: 60000 } };
const overrides = { listItems: { ...BREAKER, retry: { attempts: 3, backoffMs: 1 } }, createItem: BREAKER };

describe('kind: openapi with backends:', () => {
  let gw: TestGateway;
  let eu: Upstream;
  let us: Upstream;
  let euStatus = 200;
  const states: string[] = [];
  const file = (backends: unknown[], extra: Record<string, unknown> = {}) => ({ kind: 'openapi', name: 'api', spec: './specs/items.yaml', backends, overrides, ...extra });
  const reload = () => gw.app.gw.reload();
  const hashOf = (tool: string) => gw.app.gw.registry.tools.find((t) => t.name === tool)?.openapi?.hash;

  beforeAll(async () => {
    eu = await new Upstream().start();
    eu.on((req, res) => (req.url === '/healthz' ? json(res, 503, {}) : euStatus === 200 ? json(res, 200, { from: 'eu', url: req.url }) : json(res, euStatus, { error: 'eu is failing' })));
    us = await new Upstream().start();
    us.on((req, res) => json(res, 200, { from: 'us', url: req.url }));
    gw = await startGateway({
      config: { auth: { keys: [{ id: 'agent-1', key: KEYS.agent, roles: ['agent'] }, { id: 'ops', key: KEYS.admin, roles: ['agent', 'approver', 'admin'] }] } },
      onBackendState: (tool, backend, state) => states.push(`${tool}/${backend}:${state}`),
    });
  });
  afterAll(async () => {
    await gw?.close();
    await eu?.close();
    await us?.close();
  });
  beforeEach(() => {
    rmSync(gw.toolsDir, { recursive: true, force: true });
    mkdirSync(join(gw.toolsDir, 'specs'), { recursive: true });
    writeFileSync(join(gw.toolsDir, 'specs', 'items.yaml'), DOC);
    eu.seen.length = 0;
    us.seen.length = 0;
    euStatus = 200;
    states.length = 0;
  });

  it('each backend keeps its own origin and base path, and weights split the calls', async () => {
    gw.writeTool('api.yaml', file([
      { id: 'eu', baseUrl: `${eu.url}/v1/`, weight: 3 },
      { id: 'us', baseUrl: `${us.url}/v2`, weight: 1 },
    ]));
    expect((await reload()).errors).toEqual([]);
    const tool = gw.app.gw.registry.tools.find((t) => t.name === 'api.list_items');
    expect(tool?.backends.map((b) => b.id)).toEqual(['eu', 'us']);
    const answers: string[] = [];
    for (let i = 0; i < 120; i++) {
      const res = await gw.call('api.list_items', {}, { key: KEYS.agent });
      expect(res.statusCode).toBe(200);
      answers.push(res.json().result.structuredContent.from);
    }
    expect(eu.seen.every((r) => r.url === '/v1/items')).toBe(true);
    expect(us.seen.every((r) => r.url === '/v2/items')).toBe(true);
    expect(eu.seen.length + us.seen.length).toBe(120);
    // 3:1 → about 90:30; both served, eu clearly more (eu ≤ 1.5 × us is 3.8 standard deviations off).
    expect(us.seen.length).toBeGreaterThanOrEqual(5);
    expect(eu.seen.length).toBeGreaterThan(us.seen.length * 1.5);
    // The audit names the backend that answered each call.
    const records = (await gw.audit()).filter((r) => r.tool === 'api.list_items').slice(-120);
    expect(records.filter((r) => r.backend === 'eu')).toHaveLength(eu.seen.length);
    expect(records.filter((r) => r.backend === 'us')).toHaveLength(us.seen.length);
  });

  it('a GET fails over to the other backend, and the breaker of the failing one opens (the other stays closed)', async () => {
    gw.writeTool('api.yaml', file([
      { id: 'eu', baseUrl: eu.url, priority: 0 },
      { id: 'us', baseUrl: us.url, priority: 1 },
    ]));
    expect((await reload()).errors).toEqual([]);
    euStatus = 503;
    const opened = gw.waitForState('api.list_items', 'eu', 'open');
    for (let i = 0; i < 3; i++) {
      const res = await gw.call('api.list_items', {}, { key: KEYS.agent });
      expect(res.statusCode).toBe(200);
      expect(res.json().result.structuredContent).toEqual({ from: 'us', url: '/items' });
    }
    await opened;
    expect(eu.seen.length).toBe(2); // the third call skipped the open breaker
    expect(states.filter((s) => s.startsWith('api.list_items/us:'))).not.toContain('api.list_items/us:open');
    const record = (await gw.audit()).filter((r) => r.tool === 'api.list_items').at(-1)!;
    expect(record.backend).toBe('us');
    // The POST's backends have their own breakers: untouched by the GET's failures.
    expect(states.some((s) => s.startsWith('api.create_item/'))).toBe(false);
  });

  it('a POST is not sent to another backend once it may have taken effect (5xx), but is when the connection was refused', async () => {
    gw.writeTool('api.yaml', file([
      { id: 'eu', baseUrl: eu.url, priority: 0 },
      { id: 'us', baseUrl: us.url, priority: 1 },
    ]));
    expect((await reload()).errors).toEqual([]);
    euStatus = 503;
    const res = await gw.call('api.create_item', { body: { name: 'x' } }, { key: KEYS.agent });
    expect(res.statusCode).toBeGreaterThanOrEqual(500);
    expect(eu.seen.map((r) => r.method)).toEqual(['POST']);
    expect(us.seen).toEqual([]);
    const record = (await gw.audit()).filter((r) => r.tool === 'api.create_item').at(-1)!;
    expect(record.backend).toBe('eu');

    // Refused: the request never reached an upstream, so the next backend may take it.
    const closed = await new Upstream().start();
    const refusedUrl = closed.url;
    await closed.close();
    gw.writeTool('api.yaml', file([
      { id: 'gone', baseUrl: refusedUrl, priority: 0 },
      { id: 'us', baseUrl: us.url, priority: 1 },
    ]));
    expect((await reload()).errors).toEqual([]);
    const moved = await gw.call('api.create_item', { body: { name: 'y' } }, { key: KEYS.agent });
    expect(moved.statusCode).toBe(200);
    expect(us.seen.map((r) => `${r.method} ${r.url} ${r.body}`)).toEqual(['POST /items {"name":"y"}']);
    expect((await gw.audit()).filter((r) => r.tool === 'api.create_item').at(-1)!.backend).toBe('us');
  });

  it("a backend's probe runs on its own origin: an unhealthy backend is skipped", async () => {
    gw.writeTool('api.yaml', file([
      { id: 'eu', baseUrl: `${eu.url}/v1`, priority: 0, probe: { http: { path: '/healthz' }, intervalMs: 100, unhealthyAfter: 1 } },
      { id: 'us', baseUrl: us.url, priority: 1 },
    ]));
    const unhealthy = gw.waitForState('api.list_items', 'eu', 'unhealthy');
    expect((await reload()).errors).toEqual([]);
    await unhealthy;
    expect(eu.seen.some((r) => r.method === 'GET' && r.url === '/healthz')).toBe(true);
    const res = await gw.call('api.list_items', {}, { key: KEYS.agent });
    expect(res.json().result.structuredContent).toEqual({ from: 'us', url: '/items' });
    expect(eu.seen.filter((r) => r.url !== '/healthz')).toEqual([]);
  });

  it('editing only the backends keeps the pins (nothing held), and a document change is still held', async () => {
    gw.writeTool('api.yaml', file([{ id: 'eu', baseUrl: eu.url }]));
    expect((await reload()).errors).toEqual([]);
    const before = hashOf('api.list_items');
    expect(before).toMatch(/^[0-9a-f]{64}$/);
    gw.writeTool('api.yaml', file([
      { id: 'eu2', baseUrl: `${us.url}/v9`, weight: 5, priority: 1 },
      { id: 'us', baseUrl: us.url, cost: 2 },
    ]));
    expect((await reload()).errors).toEqual([]);
    expect(hashOf('api.list_items')).toBe(before);
    const listed = (await gw.app.inject({ url: '/v1/tools', headers: { authorization: `Bearer ${KEYS.agent}` } })).json().tools as { name: string; openapi?: { held?: boolean } }[];
    expect(listed.filter((t) => t.name.startsWith('api.')).map((t) => t.openapi?.held ?? false)).toEqual([false, false]);
    const res = await gw.call('api.list_items', {}, { key: KEYS.agent });
    expect(res.statusCode).toBe(200);
    expect(res.json().result.structuredContent.from).toBe('us');
    // The document's own change to the operation is still held for review, backends or not.
    writeFileSync(join(gw.toolsDir, 'specs', 'items.yaml'), DOC.replace('operationId: listItems', 'operationId: listItems\n      summary: Now deletes everything'));
    expect((await reload()).errors).toEqual([]);
    const after = (await gw.app.inject({ url: '/v1/tools', headers: { authorization: `Bearer ${KEYS.agent}` } })).json().tools as { name: string; openapi?: { held?: boolean } }[];
    expect(after.find((t) => t.name === 'api.list_items')?.openapi?.held).toBe(true);
  });

  it("the README's backends: example loads as written (its URLs pointed at the two upstreams)", async () => {
    const readme = readFileSync('README.md', 'utf8');
    const section = readme.slice(readme.indexOf('## REST APIs from OpenAPI documents'));
    const block = [...section.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] as string).find((b) => b.includes('backends:'));
    const example = parse(block!) as { backends: { id: string; baseUrl: string }[] };
    expect(example.backends.map((b) => b.id)).toEqual(['eu', 'us', 'backup']);
    const local: Record<string, string> = { eu: eu.url, us: us.url, backup: us.url };
    gw.writeTool('api.yaml', { ...example, name: 'api', backends: example.backends.map((b) => ({ ...b, baseUrl: `${local[b.id]}${new URL(b.baseUrl).pathname}` })) });
    expect((await reload()).errors).toEqual([]);
    expect(gw.app.gw.registry.tools.find((t) => t.name === 'api.list_items')?.backends.map((b) => [b.id, b.priority])).toEqual([['eu', 0], ['us', 0], ['backup', 1]]);
    expect((await gw.call('api.list_items', {}, { key: KEYS.agent })).json().result.structuredContent.url).toBe('/v1/items');
  });

  it('refuses baseUrl beside backends, a repeated id, and a backend URL with credentials, a query or another scheme', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [file([{ id: 'eu', baseUrl: eu.url }], { baseUrl: us.url }), /baseUrl and backends exclude each other/],
      [file([{ id: 'eu', baseUrl: eu.url }, { id: 'eu', baseUrl: us.url }]), /backend id 'eu' is used twice/],
      [file([{ id: 'eu', baseUrl: `http://user:pw@127.0.0.1:1/` }]), /may not carry credentials/],
      [file([{ id: 'eu', baseUrl: `${eu.url}/?token=x` }]), /may not carry a query/],
      [file([{ id: 'eu', baseUrl: 'file:///etc/passwd' }]), /baseUrl/],
      [file([]), /backends/],
      [file([{ id: 'eu', baseUrl: eu.url, http: { url: 'http://evil.example/' } }]), /backends/],
    ];
    for (const [tool, message] of cases) {
      gw.writeTool('api.yaml', tool);
      const r = await reload();
      expect(JSON.stringify(r.errors), JSON.stringify(tool)).toMatch(message);
    }
    expect(eu.seen).toEqual([]);
  });
});
