import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { echoTool, startGateway, type TestGateway } from '../helpers/app.js';

const AGENT = 'agent-key-0001';
const WEATHER_ONLY = 'weather-key-0002';
const OPS = 'ops-key-0003';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** The REST contract: auth, roles, tool globs, formats, errors and their shapes. */
describe('REST API', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startGateway({
      env: { AGENT_KEY: AGENT },
      config: {
        server: { bodyLimitBytes: 2048 },
        auth: {
          keys: [
            { id: 'agent-1', key: '${env:AGENT_KEY}', roles: ['agent'] },
            { id: 'weather-bot', key: WEATHER_ONLY, roles: ['agent'], tools: ['weather.*'] },
            { id: 'ops', sha256: sha(OPS), roles: ['agent', 'approver', 'admin'] }, // calling a tool needs 'agent', admin or not
          ],
        },
      },
      tools: {
        'echo.yaml': echoTool('debug.echo', {
          inputSchema: {
            type: 'object',
            required: ['message'],
            additionalProperties: false,
            properties: { message: { type: 'string', maxLength: 10 }, count: { type: 'integer', minimum: 1 }, when: { type: 'string', format: 'date' } },
          },
        }),
        'weather.yaml': echoTool('weather.current'),
        'admin-only.yaml': echoTool('ops.secret_tool', { visibility: { roles: ['admin'] } }),
        'old.yaml': echoTool('weather.old', { deprecated: { replacement: 'weather.current' } }),
        'delay.yaml': { ...echoTool('debug.delay', { timeoutMs: 200 }), backends: [{ id: 'b', builtin: 'delay' }], visibility: { roles: ['admin'] } },
      },
    });
  });
  afterAll(() => gw.close());

  describe('authentication and visibility', () => {
    it('401 UNAUTHENTICATED without a key and with an unknown key', async () => {
      const none = await gw.app.inject({ method: 'GET', url: '/v1/tools' });
      expect(none.statusCode).toBe(401);
      expect(none.json().error.code).toBe('UNAUTHENTICATED');
      const bad = await gw.app.inject({ method: 'GET', url: '/v1/tools', headers: { authorization: 'Bearer nope' } });
      expect(bad.statusCode).toBe(401);
    });

    it('accepts a plain key from env and a key given by its sha256', async () => {
      const a = await gw.app.inject({ method: 'GET', url: '/v1/tools', headers: { authorization: `Bearer ${AGENT}` } });
      expect(a.statusCode).toBe(200);
      const o = await gw.app.inject({ method: 'GET', url: '/v1/tools', headers: { authorization: `Bearer ${OPS}` } });
      expect(o.statusCode).toBe(200);
      expect(o.json().tools.map((t: { name: string }) => t.name)).toContain('ops.secret_tool');
      expect(a.json().tools.map((t: { name: string }) => t.name)).not.toContain('ops.secret_tool');
    });

    it("limits a key to its tool globs: hidden in lists, FORBIDDEN on call", async () => {
      const list = await gw.app.inject({ method: 'GET', url: '/v1/tools', headers: { authorization: `Bearer ${WEATHER_ONLY}` } });
      expect(list.json().tools.map((t: { name: string }) => t.name)).toEqual(['weather.current', 'weather.old']);
      const call = await gw.call('debug.echo', { message: 'x' }, { key: WEATHER_ONLY });
      expect(call.statusCode).toBe(403);
      expect(call.json().error.code).toBe('FORBIDDEN');
      const ok = await gw.call('weather.current', {}, { key: WEATHER_ONLY });
      expect(ok.statusCode).toBe(200);
      expect((await gw.audit()).at(-1)).toMatchObject({ caller: 'weather-bot', tool: 'weather.current', outcome: 'ok' });
    });

    it('needs the admin role for /admin/reload', async () => {
      const agent = await gw.app.inject({ method: 'POST', url: '/admin/reload', headers: { authorization: `Bearer ${AGENT}` } });
      expect(agent.statusCode).toBe(403);
      const ops = await gw.app.inject({ method: 'POST', url: '/admin/reload', headers: { authorization: `Bearer ${OPS}` } });
      expect(ops.statusCode).toBe(200);
      expect(ops.json()).toMatchObject({ tools: 5, errors: [] });
    });
  });

  describe('calls and their errors', () => {
    const call = (name: string, args: unknown) => gw.call(name, args, { key: AGENT });

    it('runs a call and answers the SPEC shape', async () => {
      const res = await call('debug.echo', { message: 'hello' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        tool: 'debug.echo',
        status: 'ok',
        backend: 'b',
        attempts: 1,
        fallback: null,
        result: { isError: false, structuredContent: { message: 'hello' }, content: [{ type: 'text', text: '{"message":"hello"}' }] },
      });
      expect(res.json().callId).toMatch(/^c_/);
    });

    it('scopes an Idempotency-Key to its caller', async () => {
      const headers = { 'idempotency-key': 'same-key' };
      const mine = await gw.call('weather.current', { n: 1 }, { key: AGENT, headers });
      const again = await gw.call('weather.current', { n: 1 }, { key: AGENT, headers });
      const theirs = await gw.call('weather.current', { n: 1 }, { key: WEATHER_ONLY, headers });
      expect(again.json().callId).toBe(mine.json().callId);
      expect(theirs.statusCode).toBe(200);
      expect(theirs.json().callId).not.toBe(mine.json().callId);
    });

    it('accepts the provider name a model saw', async () => {
      const res = await call('debug__echo', { message: 'hi' });
      expect(res.statusCode).toBe(200);
      expect(res.json().tool).toBe('debug.echo');
    });

    it('422 INVALID_ARGUMENTS lists every violation by JSON pointer', async () => {
      const res = await call('debug.echo', { message: 'far too long a message', count: 0, when: 'not-a-date', extra: 1 });
      expect(res.statusCode).toBe(422);
      const err = res.json().error;
      expect(err.code).toBe('INVALID_ARGUMENTS');
      const paths = err.details.map((d: { path: string }) => d.path);
      expect(paths).toEqual(expect.arrayContaining(['/message', '/count', '/when', '/extra']));
      expect(err.modelMessage).toContain('/message');
      const missing = await call('debug.echo', {});
      expect(missing.json().error.details[0].message).toContain("'message'");
    });

    it('404 TOOL_NOT_FOUND suggests close names the caller may see', async () => {
      const res = await call('debug.ecko', {});
      expect(res.statusCode).toBe(404);
      const err = res.json().error;
      expect(err.code).toBe('TOOL_NOT_FOUND');
      expect(err.modelMessage).toContain("'debug.echo'");
      const hidden = await call('ops.secret_tol', {});
      expect(hidden.json().error.modelMessage).not.toContain('ops.secret_tool');
    });

    it('refuses a deprecated tool, naming its replacement', async () => {
      const res = await call('weather.old', {});
      expect(res.statusCode).toBe(403);
      expect(res.json().error.modelMessage).toContain("'weather.current'");
      const listed = await gw.app.inject({ method: 'GET', url: '/v1/tools/weather.old', headers: { authorization: `Bearer ${AGENT}` } });
      expect(listed.statusCode).toBe(200);
      expect(listed.json()).toMatchObject({ deprecated: true, replacement: 'weather.current' });
      expect(listed.json().description).toContain('Deprecated');
    });

    it('400 BAD_REQUEST for malformed JSON, a wrong body shape, and non-JSON bodies', async () => {
      const headers = { authorization: `Bearer ${AGENT}`, 'content-type': 'application/json' };
      const broken = await gw.app.inject({ method: 'POST', url: '/v1/tools/debug.echo/call', headers, payload: '{"arguments": {' });
      expect(broken.statusCode).toBe(400);
      expect(broken.json().error.code).toBe('BAD_REQUEST');
      const shape = await gw.app.inject({ method: 'POST', url: '/v1/tools/debug.echo/call', headers, payload: { arguments: [1], other: true } });
      expect(shape.statusCode).toBe(400);
      expect(shape.json().error.details.length).toBeGreaterThan(0);
      const text = await gw.app.inject({
        method: 'POST',
        url: '/v1/tools/debug.echo/call',
        headers: { authorization: `Bearer ${AGENT}`, 'content-type': 'text/plain' },
        payload: 'hello',
      });
      expect(text.statusCode).toBe(400);
      expect(text.json().error.code).toBe('BAD_REQUEST');
    });

    it('413 PAYLOAD_TOO_LARGE over the body limit', async () => {
      const res = await call('debug.echo', { message: 'x'.repeat(5000) });
      expect(res.statusCode).toBe(413);
      expect(res.json().error.code).toBe('PAYLOAD_TOO_LARGE');
    });

    it('504 TIMEOUT stops a builtin at the tool deadline too', async () => {
      const res = await gw.call('debug.delay', { ms: 30000 }, { key: OPS });
      expect(res.statusCode).toBe(504);
      expect(res.json().error.code).toBe('TIMEOUT');
      expect((await gw.audit()).at(-1)).toMatchObject({ tool: 'debug.delay', outcome: 'error', errorCode: 'TIMEOUT', caller: 'ops' });
    });

    it('404 NOT_FOUND for an unknown route, in the error shape', async () => {
      const res = await gw.app.inject({ method: 'GET', url: '/v2/nothing' });
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toMatchObject({ code: 'NOT_FOUND', retryable: false });
    });
  });

  describe('request ids', () => {
    it('echoes a plain x-request-id and generates one otherwise', async () => {
      const given = await gw.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'req-123' } });
      expect(given.headers['x-request-id']).toBe('req-123');
      const made = await gw.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id\twith spaces' } });
      expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      const err = await gw.app.inject({ method: 'GET', url: '/v1/tools', headers: { 'x-request-id': 'req-err' } });
      expect(err.statusCode).toBe(401);
      expect(err.headers['x-request-id']).toBe('req-err');
    });

    it('writes the request id into the audit record', async () => {
      await gw.call('debug.echo', { message: 'trace' }, { key: AGENT, headers: { 'x-request-id': 'trace-me-1' } });
      expect((await gw.audit()).find((r) => r.requestId === 'trace-me-1')).toMatchObject({ tool: 'debug.echo', outcome: 'ok' });
    });
  });

  describe('tool lists in each provider format', () => {
    const list = async (format: string) =>
      (await gw.app.inject({ method: 'GET', url: `/v1/tools?format=${format}`, headers: { authorization: `Bearer ${AGENT}` } })).json();
    const NAME_RULE = /^[a-zA-Z0-9_-]{1,64}$/;

    it('openai: function tools with provider-safe names', async () => {
      const body = await list('openai');
      expect(body.tools.length).toBe(3);
      for (const t of body.tools) {
        expect(t.type).toBe('function');
        expect(t.function.name).toMatch(NAME_RULE);
        expect(t.function.parameters.type).toBe('object');
      }
      expect(body.tools.map((t: { function: { name: string } }) => t.function.name)).toContain('debug__echo');
    });

    it('anthropic: name, description, input_schema', async () => {
      const body = await list('anthropic');
      for (const t of body.tools) {
        expect(t.name).toMatch(NAME_RULE);
        expect(Object.keys(t).sort()).toEqual(['description', 'input_schema', 'name']);
      }
    });

    it('mcp: canonical names and annotations', async () => {
      const body = await list('mcp');
      const echo = body.tools.find((t: { name: string }) => t.name === 'debug.echo');
      expect(echo.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
      expect(echo.inputSchema.required).toEqual(['message']);
    });

    it('rejects an unknown format', async () => {
      const res = await gw.app.inject({ method: 'GET', url: '/v1/tools?format=cohere', headers: { authorization: `Bearer ${AGENT}` } });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('BAD_REQUEST');
    });

    it('GET /v1/tools/{name} shows backends, by canonical or provider name', async () => {
      for (const name of ['debug.echo', 'debug__echo']) {
        const res = await gw.app.inject({ method: 'GET', url: `/v1/tools/${name}`, headers: { authorization: `Bearer ${AGENT}` } });
        expect(res.statusCode).toBe(200);
        expect(res.json()).toMatchObject({ name: 'debug.echo', backends: [{ id: 'b', kind: 'builtin', state: 'closed' }] });
      }
    });
  });

  describe('probes and docs need no key', () => {
    it('healthz, readyz, openapi.json, docs', async () => {
      expect((await gw.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
      const ready = await gw.app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toMatchObject({ status: 'ready', tools: 5 });
      const doc = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json();
      expect(doc.openapi).toMatch(/^3\./);
      expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/tools', '/v1/tools/{name}', '/v1/tools/{name}/call', '/healthz', '/readyz']));
      const docs = await gw.app.inject({ method: 'GET', url: '/docs/' });
      expect(docs.statusCode).toBe(200);
      expect(docs.headers['content-type']).toContain('text/html');
    });
  });
});
