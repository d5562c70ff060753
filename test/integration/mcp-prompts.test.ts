import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import type { TestGateway } from '../helpers/app.js';
import { startPassthroughGateway, type Era, type PassthroughGateway } from '../helpers/passthrough.js';
import { EVERYTHING } from '../helpers/processes.js';
import { untilAsync } from '../helpers/wait.js';

// Prompts, completions and logging of server-everything through /mcp with the v2 SDK client in
// both eras; a server with `prefix: ""` (names and URIs unchanged); two such servers giving the
// same names (the first file keeps them, the later one's file has the problem); visibility per
// key; unknown prompts and arguments.

const ALL = 'prm-all-key-000000001';
const NARROW = 'prm-narrow-key-000002';
const GLOBS = 'prm-globs-key-0000003';
const ADMIN = 'prm-admin-key-0000004';
const node = process.execPath;
const FIXTURE = fileURLToPath(new URL('../fixtures/mcp/passthrough-server.mjs', import.meta.url));
const everything = (name: string, extra: Record<string, unknown> = {}) => ({ kind: 'mcp-server', name, transport: 'stdio', command: node, args: [EVERYTHING, 'stdio'], prestart: true, ...extra });

describe('prompts, completions and logging through /mcp', () => {
  let gw: TestGateway;
  let t: PassthroughGateway | undefined;
  const connect = (era: Era, key = ALL) => t!.clients.connect(era, key);

  beforeAll(async () => {
    t = await startPassthroughGateway({
      config: {
        auth: {
          keys: [
            { id: 'all', key: ALL, roles: ['agent'] },
            { id: 'narrow', key: NARROW, roles: ['agent'], tools: ['ev.echo'] },
            { id: 'globs', key: GLOBS, roles: ['agent'], tools: ['ev.echo'], prompts: ['ev.simple-*'] },
            { id: 'admin', key: ADMIN, roles: ['admin'] },
          ],
        },
      },
      tools: {
        'ev.yaml': everything('ev', { prompts: { exclude: ['resource-prompt'] } }),
        'plain.yaml': everything('plain', { prefix: '' }),
        // A v2-SDK server (2026-07-28 upstream) without prefix too: it gives one URI and one prompt name as `plain` does
        // (fx.yaml comes before plain.yaml: fx keeps them).
        'fx.yaml': { kind: 'mcp-server', name: 'fx', prefix: '', transport: 'stdio', command: node, args: [FIXTURE], prestart: true },
      },
    }, 'prm-test');
    gw = t.gw;
  }, 60000);
  afterAll(async () => {
    await t?.close();
  });

  for (const era of ['legacy', 'modern'] as const) {
    it(`${era}: prompts are listed as <prefix>.<name> (unchanged with prefix ""), and got with arguments`, async () => {
      const c = await connect(era);
      const names = (await c.listPrompts({}, { cacheMode: 'bypass' })).prompts.map((p) => p.name);
      expect(names).toEqual(expect.arrayContaining(['ev.simple-prompt', 'ev.args-prompt', 'ev.completable-prompt', 'args-prompt', 'resource-prompt', 'fixture-prompt']));
      expect(names).not.toContain('ev.resource-prompt'); // the server file's exclude
      expect(names.filter((n) => n === 'simple-prompt')).toHaveLength(1); // two servers without prefix give it: the first file's
      const got = await c.getPrompt({ name: 'ev.args-prompt', arguments: { city: 'Lisbon', state: 'Lx' } });
      expect(JSON.stringify(got.messages)).toContain('Lisbon');
      const plain = await c.getPrompt({ name: 'args-prompt', arguments: { city: 'Faro' } });
      expect(JSON.stringify(plain.messages)).toContain('Faro');
      const fx = await c.getPrompt({ name: 'fixture-prompt', arguments: { topic: 'gateways' } });
      expect(JSON.stringify(fx.messages)).toContain('Tell me about gateways');
      expect(JSON.stringify((await c.getPrompt({ name: 'simple-prompt' })).messages)).toContain('clash'); // fx's, not plain's
    });

    it(`${era}: completion/complete for a prompt argument and a resource template goes to the owning server; unknown ones are invalid params`, async () => {
      const c = await connect(era);
      const done = await c.complete({ ref: { type: 'ref/prompt', name: 'ev.completable-prompt' }, argument: { name: 'department', value: 'E' } });
      expect(done.completion.values).toContain('Engineering');
      await expect(c.complete({ ref: { type: 'ref/prompt', name: 'ev.completable-prompt' }, argument: { name: 'nope', value: '' } })).rejects.toMatchObject({ code: -32602 });
      await expect(c.complete({ ref: { type: 'ref/prompt', name: 'ev.no-such-prompt' }, argument: { name: 'x', value: '' } })).rejects.toMatchObject({ code: -32602 });
      const { resourceTemplates } = await c.listResourceTemplates({}, { cacheMode: 'bypass' });
      const t = resourceTemplates.find((x) => x.uriTemplate.startsWith('toolgate://ev/') && x.uriTemplate.includes('{resourceId}'));
      expect(t, JSON.stringify(resourceTemplates.map((x) => x.uriTemplate))).toBeDefined();
      const ids = await c.complete({ ref: { type: 'ref/resource', uri: t!.uriTemplate }, argument: { name: 'resourceId', value: '1' } });
      expect(ids.completion.values.length).toBeGreaterThan(0);
      await expect(c.complete({ ref: { type: 'ref/resource', uri: 'toolgate://ev/nope%3A%2F%2F{x}' }, argument: { name: 'x', value: '' } })).rejects.toMatchObject({ code: -32602 });
    });
  }

  it('an unknown or hidden prompt is invalid params, the same for both; prompts/get is audited without its text', async () => {
    const narrow = await connect('legacy', NARROW);
    expect((await narrow.listPrompts({}, { cacheMode: 'bypass' })).prompts).toEqual([]);
    const hidden = await narrow.getPrompt({ name: 'ev.args-prompt', arguments: { city: 'x' } }).catch((e: { code: number; message: string }) => e);
    const missing = await narrow.getPrompt({ name: 'ev.nope', arguments: { city: 'x' } }).catch((e: { code: number; message: string }) => e);
    expect(hidden).toMatchObject({ code: -32602 });
    expect((hidden as { message: string }).message.replace('ev.args-prompt', 'X')).toBe((missing as { message: string }).message.replace('ev.nope', 'X'));
    const globs = await connect('legacy', GLOBS);
    expect((await globs.listPrompts({}, { cacheMode: 'bypass' })).prompts.map((p) => p.name)).toEqual(['ev.simple-prompt']);

    const c = await connect('legacy');
    await c.getPrompt({ name: 'ev.args-prompt', arguments: { city: 'Secretcity' } });
    const rec = (await gw.audit()).find((a) => a['mcpMethod'] === 'prompts/get' && a['prompt'] === 'ev.args-prompt' && a['caller'] === 'all');
    expect(rec).toMatchObject({ server: 'ev', upstreamPrompt: 'args-prompt', outcome: 'ok' });
    expect(String(rec?.['responseHash'])).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(JSON.stringify(rec)).not.toContain('Secretcity');
  });

  it('prefix "": resources pass with their own URIs, routed by which server listed them; a URI two such servers list is the first file\'s, the clash a problem of the later file', async () => {
    const c = await connect('legacy');
    const uris: string[] = [];
    let cursor: string | undefined;
    do {
      const r = await c.listResources(cursor === undefined ? {} : { cursor }, { cacheMode: 'bypass' });
      uris.push(...r.resources.map((x) => x.uri));
      cursor = r.nextCursor;
    } while (cursor !== undefined);
    expect(uris).toContain('demo://resource/static/document/how-it-works.md');
    expect(uris).toContain('fixture://note');
    expect(uris.filter((u) => u === 'demo://resource/static/document/architecture.md')).toHaveLength(1);
    const read = await c.readResource({ uri: 'demo://resource/static/document/how-it-works.md' }, { cacheMode: 'bypass' });
    expect(read.contents[0]?.uri).toBe('demo://resource/static/document/how-it-works.md');
    const note = await c.readResource({ uri: 'fixture://note' }, { cacheMode: 'bypass' });
    expect(note.contents[0]).toMatchObject({ uri: 'fixture://note', text: 'a note from the fixture' });
    const clash = await c.readResource({ uri: 'demo://resource/static/document/architecture.md' }, { cacheMode: 'bypass' });
    expect(clash.contents[0]).toMatchObject({ text: 'not the real one' }); // fx's (fx.yaml is first)
    const reload = await gw.app.inject({ method: 'GET', url: '/admin/reload', headers: { authorization: `Bearer ${ADMIN}` } });
    const errors = (reload.json() as { errors: { file: string; message: string }[] }).errors;
    const onPlain = errors.filter((e) => e.file.endsWith('plain.yaml')).map((e) => e.message);
    expect(onPlain).toEqual(expect.arrayContaining([expect.stringContaining("resource 'demo://resource/static/document/architecture.md' clashes with the one MCP server 'fx'"), expect.stringContaining("prompt 'simple-prompt' clashes")]));
    expect(errors.filter((e) => e.file.endsWith('fx.yaml'))).toEqual([]);
  });

  it('logging: a session that set a level hears the server\'s messages; one that did not, or cannot see the server, hears none', async () => {
    const a = await connect('legacy');
    const quiet = await connect('legacy');
    const narrow = await connect('legacy', NARROW);
    const heard: Record<string, string[]> = { a: [], quiet: [], narrow: [] };
    a.setNotificationHandler('notifications/message', (n) => void heard['a']!.push(String(n.params.logger)));
    quiet.setNotificationHandler('notifications/message', (n) => void heard['quiet']!.push(String(n.params.logger)));
    narrow.setNotificationHandler('notifications/message', (n) => void heard['narrow']!.push(String(n.params.logger)));
    await a.setLoggingLevel('debug');
    await narrow.setLoggingLevel('debug');
    expect((await gw.call('ev.toggle-simulated-logging', {}, { key: ALL })).statusCode).toBe(200);
    await untilAsync(async () => heard['a']!.length > 0, 'a log message', 15000);
    expect(heard['a']![0]).toMatch(/^ev/);
    expect(heard['quiet']).toEqual([]);
    expect(heard['narrow']).toEqual([]);
    await gw.call('ev.toggle-simulated-logging', {}, { key: ALL });
  }, 30000);
});
