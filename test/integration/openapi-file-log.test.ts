import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { lineSink } from '../helpers/log-lines.js';
import { createLogger } from '../../src/logger.js';

/** What an operator reads in the gateway's log about a kind: openapi file: each skipped operation once, each held change. */
describe('kind: openapi in the gateway log', () => {
  let gw: TestGateway;
  const lines: string[] = [];
  const logged = () => lines.map((l) => JSON.parse(l) as { level: number; msg: string; file?: string; line?: number; path?: string; tool?: string; status?: string });
  const spec = (summary: string) =>
    stringify({
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      paths: {
        '/a': { get: { operationId: 'a', summary, responses: { '200': { description: 'ok' } } } },
        '/s': { get: { operationId: 's', parameters: [{ name: 'q', in: 'query', style: 'matrix', schema: { type: 'string' } }], responses: { '200': { description: 'ok' } } } },
      },
    });

  beforeAll(async () => {
    gw = await startGateway({ logger: createLogger('info', new Set(), lineSink(lines)) });
    mkdirSync(join(gw.toolsDir, 'specs'));
    writeFileSync(join(gw.toolsDir, 'specs', 'svc.yaml'), spec('first'));
    gw.writeTool('svc.yaml', { kind: 'openapi', name: 'svc', spec: 'specs/svc.yaml', baseUrl: 'http://127.0.0.1:9' });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('a skipped operation is a warn line with the document, line and pointer, once however many reloads', async () => {
    await gw.app.gw.reload();
    await gw.app.gw.reload();
    const skips = logged().filter((l) => l.level === 40 && l.msg.includes('GET /s'));
    expect(skips).toEqual([expect.objectContaining({ file: join(gw.toolsDir, 'specs', 'svc.yaml'), line: expect.any(Number), path: expect.stringContaining('/paths/~1s/get'), msg: expect.stringContaining("svc: operation GET /s skipped: ") })]);
  });

  it('a held change is a warn line naming the tool', async () => {
    writeFileSync(join(gw.toolsDir, 'specs', 'svc.yaml'), spec('second'));
    await gw.app.gw.reload();
    expect(logged()).toContainEqual(expect.objectContaining({ level: 40, tool: 'svc.a', status: 'held', msg: 'OpenAPI operation definition changed: held' }));
  });
});
