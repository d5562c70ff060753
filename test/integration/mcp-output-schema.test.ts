import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/app.js';

// An MCP server's tool that declares an outputSchema is held to it through the gateway, as the 1.x
// SDK client held it: a structuredContent that does not match, or none at all, is UPSTREAM_ERROR
// (never retried), not a result passed on. The v2 client checks only from its own tools/list
// cache, which the pool never fills.

const BAD = fileURLToPath(new URL('../fixtures/mcp/bad-result-server.mjs', import.meta.url));

interface CallBody {
  status: string;
  result?: { content: { type: string; text?: string }[]; structuredContent?: unknown; isError?: boolean };
  error?: { code: string; message: string; details?: { path: string; message: string }[] };
}

describe('MCP results against the tool outputSchema', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startGateway({
      tools: {
        'typed.yaml': { kind: 'mcp-server', name: 'typed', transport: 'stdio', command: process.execPath, args: [BAD], prestart: true, include: ['typed_*'] },
      },
    });
    await gw.app.gw.mcp.settled();
  });

  afterAll(async () => {
    await gw?.close();
  });

  const call = async (tool: string) => {
    const res = await gw.call(`typed.${tool}`, {});
    return { status: res.statusCode, body: res.json<CallBody>() };
  };

  it('passes a structuredContent that matches', async () => {
    const { status, body } = await call('typed_ok');
    expect(status).toBe(200);
    expect(body.result?.structuredContent).toEqual({ n: 1 });
  });

  it('refuses a structuredContent that does not match, naming the path', async () => {
    const { status, body } = await call('typed_bad');
    expect(status).toBe(502);
    expect(body.error?.code).toBe('UPSTREAM_ERROR');
    expect(body.error?.message).toMatch(/does not match its outputSchema/);
    expect(body.error?.details?.[0]?.path).toBe('/n');
    expect(JSON.stringify(body)).not.toContain('"one"');
  });

  it('refuses a result without structuredContent when the schema is an object', async () => {
    const { status, body } = await call('typed_missing');
    expect(status).toBe(502);
    expect(body.error?.code).toBe('UPSTREAM_ERROR');
    expect(body.error?.message).toMatch(/no structuredContent/);
  });

  it('does not hold an error result to the schema: the tool\'s own error is what the caller gets', async () => {
    const { body } = await call('typed_error');
    expect(body.error?.message).toContain('it broke');
    expect(body.error?.message).not.toMatch(/outputSchema|structuredContent/);
  });
});
