import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { json, Upstream } from '../helpers/upstream.js';

// Red team: what the model's arguments can make an OpenAPI operation's request do (a real gateway,
// a real upstream that records what it receives).

const SECRET = 'opsKEY-1234567890abcdef';
const str = { type: 'string' };

describe('red team: OpenAPI arguments against the request', () => {
  let gw: TestGateway;
  let up: Upstream;
  let reload: Record<string, unknown>;
  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((req, res) => json(res, 200, { url: req.url }));
    const doc = {
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      components: { securitySchemes: { k: { type: 'apiKey', in: 'query', name: 'api_key' } } },
      security: [{ k: [] }],
      paths: {
        '/items/{id}': {
          get: {
            operationId: 'getItem',
            parameters: [
              { name: 'id', in: 'path', required: true, schema: str },
              { name: 'limit', in: 'query', schema: { type: 'integer', maximum: 10 } },
              { name: 'filter', in: 'query', style: 'form', explode: true, schema: { type: 'object', additionalProperties: { type: 'string' } } },
            ],
            responses: { '200': { description: 'ok' } },
          },
        },
        '/upload': { get: { operationId: 'upload', parameters: [{ name: 'Expect', in: 'header', schema: str }], responses: { '200': { description: 'ok' } } } },
      },
    };
    gw = await startGateway({ env: { K: SECRET } });
    mkdirSync(join(gw.toolsDir, 'specs'));
    writeFileSync(join(gw.toolsDir, 'specs', 'a.yaml'), stringify(doc));
    gw.writeTool('a.yaml', { kind: 'openapi', name: 'a', spec: './specs/a.yaml', baseUrl: `${up.url}/v1`, auth: { k: '${env:K}' } });
    reload = (await gw.app.inject({ method: 'POST', url: '/admin/reload' })).json();
  });
  afterAll(async () => {
    await gw?.close();
    await up?.close();
  });
  beforeEach(() => {
    up.seen.length = 0;
  });

  it('an exploded object argument sends its properties as query pairs, but not one named like a declared parameter or the API key', async () => {
    const fine = await gw.call('a.get_item', { id: '1', filter: { color: 'red' } });
    expect(fine.statusCode).toBe(200);
    expect(up.seen[0]?.url).toBe(`/v1/items/1?color=red&api_key=${SECRET}`);
    up.seen.length = 0;
    for (const filter of [{ limit: '99999' }, { api_key: 'attacker-key' }, { API_KEY: 'attacker-key' }]) {
      const r = await gw.call('a.get_item', { id: '1', limit: 5, filter });
      expect(r.statusCode, JSON.stringify(filter)).toBe(422);
      expect(r.json()).toMatchObject({ error: { code: 'INVALID_ARGUMENTS' } });
    }
    expect(up.seen).toHaveLength(0);
  });

  it('an Expect header parameter is left out at import (undici cannot send it: every call would fail as a network error and trip the breaker)', async () => {
    const upload = gw.app.gw.registry.tools.find((t) => t.name === 'a.upload');
    expect(upload).toBeDefined();
    expect(JSON.stringify(upload?.inputSchema)).not.toContain('Expect');
    expect(reload['errors']).toEqual([]);
    for (let i = 0; i < 3; i++) expect((await gw.call('a.upload', {})).statusCode).toBe(200);
  });
});
