import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lineSink } from '../helpers/log-lines.js';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/logger.js';
import { Upstream, json } from '../helpers/upstream.js';
import { until } from '../helpers/wait.js';
import { rawMcpSession } from '../helpers/mcp-raw.js';

/** pino logs: one line per request, no Authorization header, no secret value anywhere. */
describe('structured logs', () => {
  const KEY = 'agent-key-in-a-header-777';
  const SECRET = 'upstream-secret-value-999';
  const lines: string[] = [];
  let app: FastifyInstance;
  let up: Upstream;

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((req, res) => json(res, 500, { echoed: req.headers.authorization }));
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-log-'));
    mkdirSync(join(dir, 'tools.d'));
    writeFileSync(
      join(dir, 'tools.d', 'leaky.yaml'),
      stringify({
        name: 'leaky.tool',
        description: 'Sends a secret header to an upstream that echoes it in an error.',
        sideEffect: 'read',
        redact: ['password'],
        backends: [{ id: 'up', http: { url: `${up.url}/x`, headers: { authorization: 'Bearer ${env:UP_SECRET}' } } }],
      }),
    );
    const file = join(dir, 'gateway.yaml');
    writeFileSync(file, stringify({ auth: { keys: [{ id: 'agent-1', key: '${env:AGENT_KEY}' }] }, audit: { file: join(dir, 'audit.jsonl') }, tools: { dir: join(dir, 'tools.d') } }));
    const env = { AGENT_KEY: KEY, UP_SECRET: SECRET };
    const loaded = loadConfig({ file, env });
    const sink = lineSink(lines);
    app = await buildApp({ loaded, env, logger: createLogger('debug', loaded.secrets, sink) });
  });
  afterAll(async () => {
    await app.close();
    await up.close();
  });

  it('logs the request without its key, and never a secret', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/tools/leaky.tool/call',
      headers: { authorization: `Bearer ${KEY}`, 'x-request-id': 'log-test-1' },
      payload: { arguments: { password: 'hunter2-password' } },
    });
    expect(res.statusCode).toBe(502);
    app.log.info({ headers: { authorization: `Bearer ${KEY}` }, note: `the upstream key is ${SECRET}` }, 'a careless log line');
    const all = lines.join('\n');
    const request = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l['requestId'] === 'log-test-1');
    expect(request).toMatchObject({ msg: 'request', status: 502, caller: 'agent-1', url: '/v1/tools/leaky.tool/call' });
    expect(all).toContain('a careless log line');
    expect(all).not.toContain(KEY);
    expect(all).not.toContain(SECRET);
    expect(all).not.toContain('hunter2-password');
  });

  it('logs an MCP tools/call answered as JSON (a hijacked reply) like any request', async () => {
    const { post } = await rawMcpSession(await app.listen({ port: 0, host: '127.0.0.1' }), KEY);
    const res = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'leaky.tool', arguments: { password: 'hunter2-password' } } }, { 'x-request-id': 'log-mcp-2' });
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.text()).toContain('"isError":true');
    await until(() => lines.some((l) => l.includes('"log-mcp-2"') && l.includes('"msg":"request"')), 'the request line');
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['requestId'] === 'log-mcp-2' && l['msg'] === 'request');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ method: 'POST', url: '/mcp', status: 200, caller: 'agent-1' });
    expect(lines.join('\n')).not.toContain('hunter2-password');
  });
});
