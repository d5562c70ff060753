import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { CHANGING } from '../helpers/processes.js';
import { Upstream, json } from '../helpers/upstream.js';

/** An OpenAPI document and an MCP server (a real stdio child) under the same name prefix: names stay unique, each clash is reported once. */
describe('kind: openapi beside an MCP server with the same name', () => {
  let gw: TestGateway;
  let up: Upstream;
  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((req, res) => json(res, 200, { url: req.url }));
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-oa-mcp-'));
    writeFileSync(join(dir, 'desc.txt'), 'Greets someone.');
    gw = await startGateway({
      tools: {
        'a-server.yaml': { kind: 'mcp-server', name: 'pets', transport: 'stdio', command: process.execPath, args: [CHANGING], prestart: true, env: { DESC_FILE: join(dir, 'desc.txt') } },
      },
    });
    mkdirSync(join(gw.toolsDir, 'specs'));
    const op = (id: string) => ({ get: { operationId: id, responses: { '200': { description: 'ok' } } } });
    writeFileSync(join(gw.toolsDir, 'specs', 'pets.yaml'), stringify({ openapi: '3.1.0', info: { title: 'p', version: '1' }, paths: { '/greet': op('greet'), '/feed': op('feed') } }));
    gw.writeTool('b-openapi.yaml', { kind: 'openapi', name: 'pets', spec: 'specs/pets.yaml', baseUrl: up.url });
    await gw.app.gw.reload();
    await gw.app.gw.mcp.settled();
  });
  afterAll(async () => {
    await gw?.close();
    await up?.close();
  });

  it('the operation keeps the name a file tool has; the MCP tool that clashes is left out and reported; the rest serve', async () => {
    const reg = gw.app.gw.registry;
    expect(reg.get('pets.greet')?.openapi?.operationId).toBe('greet');
    expect(reg.get('pets.feed')?.openapi).toBeDefined();
    expect(reg.get('pets.wave')?.mcp?.server).toBe('pets');
    expect(reg.problems).toEqual([expect.objectContaining({ file: join(gw.toolsDir, 'a-server.yaml'), message: expect.stringContaining("imported tool 'pets.greet' clashes with the one defined in") })]);
    expect((await gw.call('pets.greet', {})).json().result.structuredContent).toEqual({ url: '/greet' });
    expect((await gw.call('pets.shout_loud', { text: 'x' })).statusCode).toBe(200);
  });
});
