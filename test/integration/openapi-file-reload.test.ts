import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGateway, type TestGateway } from '../helpers/app.js';

/**
 * Reloads with a big document (1,000 operations): the first load parses and compiles it; a
 * reload with the file and document unchanged reuses every compiled tool (no parse at all), and
 * a change to one operation recompiles that one only.
 */

const OPS = 1000;

function bigDocument(summaryOf: (i: number) => string): string {
  const paths: Record<string, unknown> = {};
  for (let i = 0; i < OPS / 2; i++) {
    paths[`/things${i}/{id}`] = {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      get: { operationId: `getThing${i}`, summary: summaryOf(i), tags: [`t${i % 10}`], parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1 } }], responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } } } },
      put: { operationId: `putThing${i}`, summary: `Replace thing ${i}`, requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } }, responses: { '200': { description: 'ok' } } },
    };
  }
  const Thing = { type: 'object', required: ['name'], properties: { name: { type: 'string', maxLength: 100 }, size: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } } };
  return JSON.stringify({ openapi: '3.1.0', info: { title: 'big', version: '1' }, servers: [{ url: 'http://127.0.0.1:9/api' }], paths, components: { schemas: { Thing } } });
}

describe('kind: openapi reloads with a 1,000-operation document', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('cold load parses; a warm reload reuses every compiled tool; one changed operation recompiles alone', async () => {
    mkdirSync(join(gw.toolsDir, 'specs'));
    writeFileSync(join(gw.toolsDir, 'specs', 'big.json'), bigDocument((i) => `Get thing ${i}`));
    gw.writeTool('big.yaml', { kind: 'openapi', name: 'big', spec: 'specs/big.json' });
    const time = async () => {
      const t = performance.now();
      const r = await gw.app.gw.reload();
      return { ms: performance.now() - t, r };
    };
    const cold = await time();
    expect(cold.r.errors).toEqual([]);
    expect(gw.app.gw.registry.tools.filter((t) => t.openapi)).toHaveLength(OPS);
    const before = new Map(gw.app.gw.registry.tools.map((t) => [t.name, t]));

    const warm = await time();
    expect(warm.r.changed).toEqual([]);
    expect(gw.app.gw.registry.tools.every((t) => before.get(t.name) === t)).toBe(true);

    writeFileSync(join(gw.toolsDir, 'specs', 'big.json'), bigDocument((i) => (i === 7 ? 'Get thing seven' : `Get thing ${i}`)));
    const one = await time();
    expect(one.r.errors).toEqual([]);
    const changed = gw.app.gw.registry.tools.filter((t) => before.get(t.name) !== t).map((t) => t.name);
    expect(changed).toEqual(['big.get_thing7']); // held (the pin), every other tool the same object
    expect(gw.app.gw.registry.get('big.get_thing7')?.openapi?.held).toBeDefined();

    console.log(`openapi reload, ${OPS} operations: cold ${cold.ms.toFixed(0)} ms, warm ${warm.ms.toFixed(1)} ms, one operation changed ${one.ms.toFixed(0)} ms`);
    expect(warm.ms).toBeLessThan(cold.ms / 5);
  });
});
