import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoTool, startGateway, type TestGateway } from '../helpers/app.js';
import { installDocuments, operationsOf } from '../helpers/openapi-real.js';

const UP = { front: 'k-front-to-upstream-01', admin: 'k-upstream-admin-0002' };
const FRONT = { agent: 'k-front-agent-00003', ops: 'k-front-ops-000004' };

/**
 * toolgate's own openapi/openapi.json as a kind: openapi file: one gateway (the front) imports the
 * document of another (the upstream, listening on 127.0.0.1) and calls it, with the bearer key the
 * upstream checks. What comes back is the upstream's real answer, under the upstream's own policies.
 */
describe("toolgate's own OpenAPI document, toolgate fronting toolgate", () => {
  let upstream: TestGateway;
  let front: TestGateway;
  let upstreamUrl = '';
  const text = readFileSync('openapi/openapi.json', 'utf8');
  const doc = JSON.parse(text) as Record<string, unknown>;
  const ops = operationsOf(doc);
  const streaming = ops.filter((o) => ((o.op['tags'] as string[] | undefined) ?? []).includes('mcp'));
  /** The tool the front made of `METHOD /path`, from the import summary (names come from method and path: no operationIds). */
  const toolOf = (method: string, path: string): string => {
    const o = front.app.gw.registry.openapi.flatMap((d) => d.operations).find((x) => x.method === method && x.path === path);
    if (!o) throw new Error(`no tool for ${method} ${path}`);
    return o.tool;
  };
  const call = (method: string, path: string, args: Record<string, unknown>, key = FRONT.agent) => front.call(toolOf(method, path), args, { key });

  beforeAll(async () => {
    upstream = await startGateway({
      config: {
        auth: {
          keys: [
            { id: 'front', key: UP.front, roles: ['agent'], tools: ['debug.*'] },
            { id: 'up-admin', key: UP.admin, roles: ['admin'] },
          ],
        },
      },
      tools: {
        'echo.yaml': echoTool('debug.echo', { inputSchema: { type: 'object', required: ['message'], properties: { message: { type: 'string' } } } }),
        'secret.yaml': echoTool('ops.secret'),
      },
    });
    await upstream.app.listen({ port: 0, host: '127.0.0.1' });
    upstreamUrl = `http://127.0.0.1:${(upstream.app.server.address() as AddressInfo).port}`;
    front = await startGateway({
      env: { UPSTREAM_KEY: UP.front },
      config: {
        auth: {
          keys: [
            { id: 'agent', key: FRONT.agent, roles: ['agent'] },
            { id: 'ops', key: FRONT.ops, roles: ['approver', 'admin'] },
          ],
        },
      },
    });
    await installDocuments(
      front,
      { 'specs/toolgate.json': text },
      {
        'toolgate.yaml': {
          kind: 'openapi',
          name: 'toolgate',
          spec: './specs/toolgate.json',
          baseUrl: upstreamUrl,
          exclude: ['mcp'], // the MCP transports stream: not tools
          auth: { bearer: '${env:UPSTREAM_KEY}' },
        },
      },
    );
  });
  afterAll(async () => {
    await front?.close();
    await upstream?.close();
  });

  it('imports every operation but the MCP transports, named from method and path, with no file problem', () => {
    expect(front.app.gw.registry.problems).toEqual([]);
    const [summary] = front.app.gw.registry.openapi;
    expect(summary?.version).toMatch(/^3\.1/);
    expect(summary?.skipped).toEqual([]);
    expect(summary?.operations.length).toBe(ops.length - streaming.length);
    expect(streaming.length).toBeGreaterThan(0);
    const names = front.app.gw.registry.tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['toolgate.get_healthz', 'toolgate.get_v1_tools', 'toolgate.post_v1_tools_name_call']));
    expect(names.filter((n) => n.startsWith('toolgate.')).length).toBe(ops.length - streaming.length);
  });

  it('calls the upstream health operation and returns its real answer', async () => {
    const res = await call('GET', '/healthz', {});
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().result.structuredContent).toEqual({ status: 'ok' });
  });

  it("lists the upstream's tools as the upstream's key scope allows, with the query parameter passed", async () => {
    const res = await call('GET', '/v1/tools', {});
    expect(res.statusCode, res.body).toBe(200);
    const listed = (res.json().result.structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(listed).toEqual(['debug.echo']); // ops.secret is outside the front's key on the upstream
    const openai = await call('GET', '/v1/tools', { format: 'openai' });
    expect(openai.statusCode, openai.body).toBe(200);
    expect(JSON.stringify(openai.json().result.structuredContent)).toContain('"function"');
    const bad = await call('GET', '/v1/tools', { format: 'cobol' });
    expect(bad.statusCode).toBe(422); // the document's enum, checked by the front before any request
  });

  it("calls a tool of the upstream through the upstream's own call operation; its answer matches the document's 200 schema", async () => {
    const res = await call('POST', '/v1/tools/{name}/call', { name: 'debug.echo', body: { arguments: { message: 'through two gateways' } } });
    expect(res.statusCode, res.body).toBe(200);
    const answer = res.json().result.structuredContent as { tool: string; status: string; result: { content: { text: string }[] } };
    expect(answer.tool).toBe('debug.echo');
    expect(answer.status).toBe('ok');
    expect(JSON.stringify(answer.result)).toContain('through two gateways');
    const records = await upstream.audit();
    expect(records.some((r) => r['tool'] === 'debug.echo' && r['caller'] === 'front')).toBe(true);
  });

  it("passes the upstream's refusals back as errors: a tool outside its key, a path parameter that tries to climb", async () => {
    const hidden = await call('POST', '/v1/tools/{name}/call', { name: 'ops.secret', body: { arguments: {} } });
    expect(hidden.statusCode).toBe(502);
    expect(JSON.stringify(hidden.json().error.details)).toContain('403');
    const climb = await call('GET', '/v1/tools/{name}', { name: '../admin/reload' });
    expect(climb.statusCode).toBe(502);
    expect(JSON.stringify(climb.json().error.details)).toMatch(/404|TOOL_NOT_FOUND/);
  });

  it("gates the document's DELETE on the front: the upstream is not called before an approval", async () => {
    const before = (await upstream.audit()).length;
    const res = await call('DELETE', '/v1/calls/{callId}', { callId: 'c_does_not_exist' });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json().status).toBe('pending_confirmation');
    expect((await upstream.audit()).length).toBe(before);
  });
});
