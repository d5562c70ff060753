import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Upstream, json } from '../helpers/upstream.js';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { untilAsync } from '../helpers/wait.js';
import { fileURLToPath } from 'node:url';

const EVERYTHING = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url));

/** Active health checks: a failing probe takes a backend out of routing, and passing ones put it back. */
describe('backend probes', () => {
  let a: Upstream;
  let b: Upstream;
  let gw: TestGateway;
  let aHealthy = true;
  const calls = (up: Upstream) => up.seen.filter((s) => s.url.startsWith('/data')).length;

  beforeAll(async () => {
    a = await new Upstream().start();
    b = await new Upstream().start();
    a.on((req, res) => (req.url === '/health' ? json(res, aHealthy ? 200 : 503, {}) : json(res, 200, { from: 'a' })));
    b.on((_req, res) => json(res, 200, { from: 'b' }));
    const probe = { http: { path: '/health' }, intervalMs: 100, unhealthyAfter: 2, healthyAfter: 2 };
    gw = await startGateway({
      rng: () => 0, // the first usable backend (a) is always tried first
      tools: {
        'weather.yaml': {
          name: 'probe.weather',
          description: 'weather with two backends',
          sideEffect: 'read',
          backends: [
            { id: 'a', http: { url: `${a.url}/data` }, probe },
            { id: 'b', http: { url: `${b.url}/data` } },
          ],
        },
        'bad.yaml': { name: 'probe.bad', description: 'an http probe on a builtin', sideEffect: 'none', backends: [{ id: 'x', builtin: 'echo', probe }] },
      },
    });
  });
  afterAll(async () => {
    await gw.close();
    await a.close();
    await b.close();
  });

  const backendState = async (id: string) => {
    const res = await gw.app.inject({ method: 'GET', url: '/v1/tools/probe.weather' });
    return (res.json().backends as { id: string; state: string }[]).find((x) => x.id === id)?.state;
  };

  it('takes a failing backend out while calls keep succeeding on the other, and puts it back', async () => {
    expect((await gw.call('probe.weather', {})).json()).toMatchObject({ backend: 'a' });

    const out = gw.waitForState('probe.weather', 'a', 'unhealthy');
    aHealthy = false;
    await out;
    expect(await backendState('a')).toBe('unhealthy');
    const metrics = await gw.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/toolgate_breaker_state\{tool="probe.weather",backend="a"\} 4/);

    const before = calls(a);
    for (let i = 0; i < 5; i++) {
      const res = await gw.call('probe.weather', {});
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ backend: 'b', attempts: 1 });
    }
    expect(calls(a)).toBe(before); // no user call was sent to the unhealthy backend

    const back = gw.waitForState('probe.weather', 'a', 'closed');
    aHealthy = true;
    await back;
    expect(await backendState('a')).toBe('closed');
    expect((await gw.call('probe.weather', {})).json()).toMatchObject({ backend: 'a' });
  });

  it('a probe that does not fit its backend is a file problem', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/v1/tools/probe.bad' });
    expect(res.statusCode).toBe(404);
  });
});

describe('MCP ping probes', () => {
  let gw: TestGateway;
  const seen: string[] = [];
  const node = process.execPath;
  const probe = { mcpPing: true, intervalMs: 200, unhealthyAfter: 1 };

  beforeAll(async () => {
    gw = await startGateway({
      onBackendState: (tool, backend, state) => seen.push(`${tool}/${backend}:${state}`),
      tools: {
        'everything.yaml': { kind: 'mcp-server', name: 'everything', transport: 'stdio', command: node, args: [EVERYTHING, 'stdio'], include: ['echo'] },
        'broken.yaml': { kind: 'mcp-server', name: 'broken', transport: 'stdio', command: node, args: ['-e', 'process.exit(3)'] },
        'live.yaml': { name: 'ping.live', description: 'echo', sideEffect: 'read', backends: [{ id: 'mcp', mcp: { server: 'everything', tool: 'echo' }, probe }] },
        'dead.yaml': { name: 'ping.dead', description: 'never up', sideEffect: 'read', backends: [{ id: 'mcp', mcp: { server: 'broken', tool: 'echo' }, probe }] },
      },
    });
  });
  afterAll(async () => {
    await gw.close();
  });

  it('a server that never answers its ping is taken out; a live one answers', async () => {
    // The dead server is spawned, probed and spawned again before its first ping fails: bounded loosely for a loaded machine.
    await untilAsync(async () => seen.includes('ping.dead/mcp:unhealthy'), 'ping.dead unhealthy', 10_000);
    await expect(gw.app.gw.mcpPool.ping('everything', Date.now() + 5000)).resolves.toBeUndefined();
    expect(seen.filter((s) => s.startsWith('ping.live/'))).toEqual([]);
  });
});
