import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { echoTool, httpTool, startGateway, type TestGateway } from '../helpers/app.js';
import { Upstream, json } from '../helpers/upstream.js';
import { parseExposition, promtoolCheck, sampleValue, type Sample } from '../helpers/metrics.js';
import { ERROR_CATALOGUE } from '../../src/errors.js';

/**
 * promtool lints three of prom-client's default Node metrics (gauges named like counters).
 * Exactly these are allowed; any other complaint, or a parse error, fails the test.
 */
const KNOWN_PROMTOOL_COMPLAINTS = [
  'nodejs_active_handles_total non-counter metrics should not have "_total" suffix',
  'nodejs_active_requests_total non-counter metrics should not have "_total" suffix',
  'nodejs_active_resources_total non-counter metrics should not have "_total" suffix',
];

const SPEC_FAMILIES = [
  'toolgate_tool_calls_total',
  'toolgate_tool_call_duration_seconds',
  'toolgate_breaker_state',
  'toolgate_confirmations_pending',
  'toolgate_registry_tools',
  'toolgate_reloads_total',
  'toolgate_mcp_connections',
  'toolgate_route_duration_seconds',
];

describe('GET /metrics', () => {
  let gw: TestGateway;
  let up: Upstream;

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((_req, res) => json(res, 503, { error: 'down' }));
    gw = await startGateway({
      tools: {
        'echo.yaml': echoTool('m.echo', { inputSchema: { type: 'object', required: ['message'], properties: { message: { type: 'string' } } } }),
        'down.yaml': httpTool('m.down', `${up.url}/down`, { breaker: { failureThreshold: 2, resetTimeoutMs: 60000 } }),
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await up?.close();
  });

  const scrape = async (): Promise<Sample[]> => {
    const res = await gw.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    return parseExposition(res.body);
  };
  const delta = (before: Sample[], after: Sample[], name: string, labels: Record<string, string>) =>
    (sampleValue(after, name, labels) ?? 0) - (sampleValue(before, name, labels) ?? 0);

  it('serves the text exposition without a key: the toolgate_ families and Node process metrics', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const family of SPEC_FAMILIES) expect(res.body).toContain(`# TYPE ${family} `);
    const samples = parseExposition(res.body);
    expect(sampleValue(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(sampleValue(samples, 'toolgate_reloads_total', { result: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(samples, 'toolgate_reloads_total', { result: 'error' })).toBe(0);
  });

  it('counts calls by tool, backend and outcome, errors by catalogue code, and times them', async () => {
    const before = await scrape();
    for (let i = 0; i < 3; i++) expect((await gw.call('m.echo', { message: `hi ${i}` })).statusCode).toBe(200);
    expect((await gw.call('m.echo', { message: 42 })).statusCode).toBe(422);
    expect((await gw.call('nope.unknown', {})).statusCode).toBe(404);
    const after = await scrape();

    expect(delta(before, after, 'toolgate_tool_calls_total', { tool: 'm.echo', backend: 'b', outcome: 'ok' })).toBe(3);
    expect(delta(before, after, 'toolgate_tool_calls_total', { tool: 'm.echo', backend: 'none', outcome: 'error' })).toBe(1);
    expect(delta(before, after, 'toolgate_tool_call_errors_total', { tool: 'm.echo', code: 'INVALID_ARGUMENTS' })).toBe(1);
    expect(delta(before, after, 'toolgate_tool_call_duration_seconds_count', { tool: 'm.echo' })).toBe(4);
    expect(sampleValue(after, 'toolgate_tool_call_duration_seconds_bucket', { tool: 'm.echo', le: '+Inf' })).toBe(4);
    // A name from the request never becomes a label value.
    expect(after.filter((s) => Object.values(s.labels).includes('nope.unknown'))).toEqual([]);
  });

  it('follows the breaker: state gauge, transitions, and the errors that opened it', async () => {
    const state = (s: Sample[]) => sampleValue(s, 'toolgate_breaker_state', { tool: 'm.down', backend: 'up' });
    const before = await scrape();
    expect(state(before)).toBe(0);
    const opened = gw.waitForState('m.down', 'up', 'open');
    for (let i = 0; i < 2; i++) expect((await gw.call('m.down', {})).statusCode).toBeGreaterThanOrEqual(500);
    await opened;
    const refused = await gw.call('m.down', {});
    expect(refused.json().error.code).toBe('CIRCUIT_OPEN');
    const after = await scrape();
    expect(state(after)).toBe(2);
    expect(delta(before, after, 'toolgate_breaker_transitions_total', { tool: 'm.down', backend: 'up', state: 'open' })).toBe(1);
    expect(delta(before, after, 'toolgate_tool_calls_total', { tool: 'm.down', backend: 'up', outcome: 'error' })).toBe(2);
    // Refused by the open breaker before any backend ran.
    expect(delta(before, after, 'toolgate_tool_calls_total', { tool: 'm.down', backend: 'none', outcome: 'error' })).toBe(1);
    const codes = after.filter((s) => s.name === 'toolgate_tool_call_errors_total' && s.labels['tool'] === 'm.down');
    expect(codes.map((s) => s.labels['code'])).toContain('CIRCUIT_OPEN');
    for (const s of codes) expect(Object.keys(ERROR_CATALOGUE)).toContain(s.labels['code']);
  });

  it('reads gauges from their sources at scrape time: registry, confirmations, MCP connections; and the route histogram', async () => {
    const m = gw.app.gw.metrics;
    m.feed({ confirmationsPending: () => 4, mcpConnections: () => [{ server: 'files', state: 'ready' }, { server: 'git', state: 'restarting' }] });
    m.observeRoute(0.002);
    const s = await scrape();
    expect(sampleValue(s, 'toolgate_registry_tools')).toBe(2);
    expect(sampleValue(s, 'toolgate_registry_generation')).toBe(gw.app.gw.registry.generation);
    expect(sampleValue(s, 'toolgate_confirmations_pending')).toBe(4);
    expect(sampleValue(s, 'toolgate_mcp_connections', { server: 'files', state: 'ready' })).toBe(1);
    expect(sampleValue(s, 'toolgate_mcp_connections', { server: 'files', state: 'restarting' })).toBe(0);
    expect(sampleValue(s, 'toolgate_mcp_connections', { server: 'git', state: 'restarting' })).toBe(1);
    expect(sampleValue(s, 'toolgate_route_duration_seconds_count')).toBe(1);
  });

  it('is valid for Prometheus: promtool check metrics finds nothing beyond the known default-metric lints', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/metrics' });
    const { lines } = await promtoolCheck(res.body);
    expect(lines.filter((l) => !KNOWN_PROMTOOL_COMPLAINTS.includes(l))).toEqual([]);
  });

  it('drops the series of a removed tool at the reload that removes it', async () => {
    unlinkSync(join(gw.toolsDir, 'echo.yaml'));
    const before = await scrape();
    const res = await gw.app.inject({ method: 'POST', url: '/admin/reload' });
    expect(res.json().removed).toEqual(['m.echo']);
    const after = await scrape();
    expect(before.some((s) => s.labels['tool'] === 'm.echo')).toBe(true);
    expect(after.filter((s) => s.labels['tool'] === 'm.echo')).toEqual([]);
    expect(delta(before, after, 'toolgate_reloads_total', { result: 'ok' })).toBe(1);
    expect(sampleValue(after, 'toolgate_registry_tools')).toBe(1);
  });
});

describe('GET /metrics with metrics.requireKey', () => {
  const AGENT = 'agent-key-metrics-1';
  const OPS = 'ops-key-metrics-2';
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({
      env: { AGENT_KEY: AGENT, OPS_KEY: OPS },
      config: {
        metrics: { requireKey: true },
        auth: { keys: [{ id: 'agent-1', key: '${env:AGENT_KEY}', roles: ['agent'] }, { id: 'ops', key: '${env:OPS_KEY}', roles: ['admin'] }] },
      },
    });
  });
  afterAll(async () => gw?.close());

  it('needs the admin role', async () => {
    const get = (key?: string) => gw.app.inject({ method: 'GET', url: '/metrics', headers: key ? { authorization: `Bearer ${key}` } : {} });
    expect((await get()).statusCode).toBe(401);
    expect((await get(AGENT)).statusCode).toBe(403);
    const ok = await get(OPS);
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('toolgate_registry_tools');
    // Probes stay open.
    expect((await gw.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });
});
