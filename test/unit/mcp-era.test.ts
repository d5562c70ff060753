import { describe, expect, it } from 'vitest';
import type { FastifyRequest } from 'fastify';
import { isLegacyRequest } from '@modelcontextprotocol/server';
import { isLegacy } from '../../src/mcp-server/era.js';

const V = 'io.modelcontextprotocol/protocolVersion';
const env = (v: unknown) => ({ [V]: v, 'io.modelcontextprotocol/clientInfo': { name: 'x', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} });

const bodies: unknown[] = [
  { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } },
  { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', _meta: env('2026-07-28') } },
  { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
  { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: {} } },
  { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: 'str' } },
  { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { progressToken: 1 } } },
  { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: env('2026-07-28') } },
  { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: env('2025-11-25') } },
  { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: env(7) } },
  { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { [V]: '2026-07-28' } } },
  { jsonrpc: '2.0', id: 1, method: 'tools/list', params: 'not an object' },
  { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: env('2026-07-28') } },
  { jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: env('2026-07-28') } },
  { jsonrpc: '2.0', id: 1, result: {} },
  [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }],
  [{ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: env('2026-07-28') } }],
  { hello: 'world' },
  42,
  null,
];
const versionHeaders = [undefined, '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2026-07-28', '2099-01-01', 'banana'];

function fake(method: string, headers: Record<string, string>): FastifyRequest {
  return { method, headers } as unknown as FastifyRequest;
}

describe('era routing of /mcp', () => {
  it('agrees with the SDK\'s own predicate (isLegacyRequest) on every body and version header, without a session id', async () => {
    for (const body of bodies) {
      for (const version of versionHeaders) {
        const headers: Record<string, string> = { 'content-type': 'application/json', ...(version ? { 'mcp-protocol-version': version } : {}) };
        const web = () => new Request('http://localhost/mcp', { method: 'POST', headers, body: JSON.stringify(body) });
        const sdk = await isLegacyRequest(web(), body);
        expect(await isLegacy(fake('POST', headers), { value: body }, web), `${JSON.stringify(body)} with ${version}`).toBe(sdk);
      }
    }
  });

  it('GET and DELETE, and a body that is no JSON, are 2025 traffic (the session transport answers them)', async () => {
    const never = () => {
      throw new Error('not consulted');
    };
    for (const method of ['GET', 'DELETE']) expect(await isLegacy(fake(method, {}), undefined, never)).toBe(true);
    expect(await isLegacy(fake('POST', {}), undefined, never)).toBe(true);
  });

  it('a claim-less message naming a session is 2025 whatever its version header (the session judges the header); with a claim it is Modern', async () => {
    const never = () => {
      throw new Error('not consulted');
    };
    const headers = { 'mcp-session-id': 's', 'mcp-protocol-version': 'banana' };
    expect(await isLegacy(fake('POST', headers), { value: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} } }, never)).toBe(true);
    expect(await isLegacy(fake('POST', headers), { value: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: env('2026-07-28') } } }, never)).toBe(false);
  });
});
