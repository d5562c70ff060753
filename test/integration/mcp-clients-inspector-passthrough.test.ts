import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { ensureClients, runDriver, type DriverOptions } from '../helpers/clients.js';
import { ok } from '../helpers/client-gateway.js';
import { EVERYTHING } from '../helpers/processes.js';

// The MCP Inspector CLI (1.x and 2.x, one process per method) reads resources and prompts of
// server-everything through /mcp: resources/list, resources/read, prompts/list, prompts/get.

const KEY = 'insp-pass-key-00000001';
const NARROW = 'insp-pass-narrow-0002';
const CASES: { title: string; opts: DriverOptions; era?: 'legacy' | 'modern' }[] = [
  { title: 'Inspector 1.x', opts: { node: 'current', args: ['v1'] } },
  { title: 'Inspector 2.x, --protocol-era modern', opts: { node: 'node22', args: ['v2'] }, era: 'modern' },
];

describe('the Inspector CLI lists and reads resources and prompts through /mcp', () => {
  let gw: TestGateway;
  let base = '';

  beforeAll(async () => {
    await ensureClients();
    gw = await startGateway({
      config: { auth: { keys: [{ id: 'insp', key: KEY, roles: ['agent'] }, { id: 'narrow', key: NARROW, roles: ['agent'], tools: ['ev.echo'] }] } },
      tools: { 'ev.yaml': { kind: 'mcp-server', name: 'ev', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], prestart: true } },
    });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  }, 90000);
  afterAll(async () => {
    await gw?.close();
  });

  const uri = `toolgate://ev/${encodeURIComponent('demo://resource/static/document/architecture.md')}`;
  for (const c of CASES) {
    it(`${c.title}: resources/list, resources/read, prompts/list, prompts/get`, async () => {
      const job = { url: `${base}/mcp`, key: KEY, transport: 'http' as const, calls: [], passthrough: { uri, prompt: 'ev.args-prompt', promptArgs: { city: 'Porto' } }, ...(c.era ? { era: c.era } : {}) };
      // The narrowed key once (with 1.x): it lists nothing, and reads nothing.
      const [mine, narrow] = await Promise.all([
        runDriver('inspector-passthrough', job, c.opts).then(ok),
        c.era ? undefined : runDriver('inspector-passthrough', { ...job, key: NARROW, passthrough: {} }, c.opts).then(ok),
      ]);
      const p = mine.passthrough!;
      expect(p.resources).toContain(uri);
      expect(p.read[0]?.uri).toBe(uri);
      expect(p.read[0]?.text).toContain('Architecture');
      expect(p.prompts).toEqual(expect.arrayContaining(['ev.simple-prompt', 'ev.args-prompt']));
      expect(JSON.stringify(p.messages)).toContain('Porto');
      if (narrow) expect(narrow.passthrough).toMatchObject({ resources: [], prompts: [], read: [] });
    }, 90000);
  }
});
