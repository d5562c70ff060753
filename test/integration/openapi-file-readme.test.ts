import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { Upstream, json } from '../helpers/upstream.js';
import { runCheck } from '../../src/cli/run.js';
import { formatReport } from '../../src/cli/format.js';

/** The README's worked example of "REST APIs from OpenAPI documents", as written there: it loads, check prints what it says, a call goes where it says. */

const README = readFileSync('README.md', 'utf8');
const section = README.slice(README.indexOf('## REST APIs from OpenAPI documents'));
const blocks = [...section.matchAll(/```(yaml|text)\n([\s\S]*?)```/g)].map((m) => m[2] as string);
const [fileText, docText, checkText] = blocks as [string, string, string];

describe('README: REST APIs from OpenAPI documents', () => {
  let gw: TestGateway;
  let up: Upstream;
  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((req, res) => json(res, 200, [{ name: 'Rex' }]));
    gw = await startGateway({ env: { PETSTORE_KEY: 'petstore-key-0123456789' } });
    mkdirSync(join(gw.toolsDir, 'specs'));
    writeFileSync(join(gw.toolsDir, 'specs', 'petstore.yaml'), docText);
    const file = parse(fileText) as Record<string, unknown>;
    writeFileSync(join(gw.toolsDir, 'petstore.yaml'), stringify({ ...file, baseUrl: up.url }));
  });
  afterAll(async () => {
    await gw?.close();
    await up?.close();
  });

  it('the example loads, and a call sends what the README says', async () => {
    expect((await gw.app.gw.reload()).errors).toEqual([]);
    const res = await gw.call('petstore.list_pets', { limit: 5 });
    expect(res.statusCode, res.body).toBe(200);
    expect(up.seen.at(-1)).toMatchObject({ method: 'GET', url: '/pets?limit=5', headers: expect.objectContaining({ 'x-api-key': 'petstore-key-0123456789' }) });
    expect(gw.app.gw.registry.get('petstore.delete_pet')).toMatchObject({ sideEffect: 'destructive', confirm: false, visibility: { roles: ['admin'] } });
  });

  it('check prints the lines the README shows', async () => {
    const report = await runCheck({ config: join(gw.dir, 'gateway.yaml'), env: { PETSTORE_KEY: 'k-0123456789' } });
    const out = formatReport(report).replaceAll(`${gw.toolsDir}/`, 'tools.d/');
    const squash = (s: string) => s.replace(/ +/g, ' ').trim();
    for (const line of checkText.trim().split('\n')) expect(out.split('\n').map(squash)).toContain(squash(line));
  });
});
