import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { untilAsync } from '../helpers/wait.js';

// Many stdio MCP servers in tools.d (issue 28, point 4, at a test's size): they start a few at a
// time (mcp.startConcurrency), every one answers, and one that crash-loops holds up neither the
// others' calls nor a reload of tools.d.

const TINY = fileURLToPath(new URL('../fixtures/mcp/tiny-server.mjs', import.meta.url));
const CRASH = fileURLToPath(new URL('../fixtures/mcp/crash-server.mjs', import.meta.url));
const KEY = 'k-many-servers-0123456789';
const SERVERS = 20;
const LIMIT = 4;

const names = Array.from({ length: SERVERS }, (_, i) => `s${String(i).padStart(2, '0')}`);
const tiny = (name: string) => ({
  kind: 'mcp-server',
  name,
  transport: 'stdio',
  command: process.execPath,
  args: [TINY, name],
  prestart: true,
  overrides: { whoami: { sideEffect: 'read', confirm: false } },
});

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

/** Handshakes in flight at once (first message out to a server until its initialize result), the most seen. */
function handshakeWatch(skip: string) {
  const open = new Set<string>();
  const done = new Set<string>();
  let most = 0;
  const trace = (server: string, direction: 'in' | 'out', message: unknown) => {
    if (server === skip || done.has(server)) return;
    if (direction === 'out') open.add(server);
    const result = (message as { result?: { protocolVersion?: unknown } }).result;
    if (direction === 'in' && typeof result?.protocolVersion === 'string') {
      open.delete(server);
      done.add(server);
    }
    most = Math.max(most, open.size);
  };
  return { trace, most: () => most, done };
}

const whoami = async (g: TestGateway, name: string) => {
  const res = await g.call(`${name}.whoami`, {}, { key: KEY });
  return { status: res.statusCode, text: res.body };
};

describe('many MCP servers in tools.d', () => {
  it(`starts ${SERVERS} servers ${LIMIT} at a time, every one reachable, beside one that crash-loops; a reload is applied meanwhile`, async () => {
    const watch = handshakeWatch('crash');
    const tools: Record<string, unknown> = Object.fromEntries(names.map((n) => [`${n}.yaml`, tiny(n)]));
    tools['crash.yaml'] = { kind: 'mcp-server', name: 'crash', transport: 'stdio', command: process.execPath, args: [CRASH], prestart: true };
    gw = await startGateway({ tools, config: { auth: { keys: [{ id: 'a', key: KEY }] }, mcp: { startConcurrency: LIMIT } }, mcpTrace: watch.trace });
    const g = gw;

    // Every server connected, never more than LIMIT handshakes at once.
    expect(watch.done.size).toBe(SERVERS);
    expect(watch.most()).toBeGreaterThan(0);
    expect(watch.most()).toBeLessThanOrEqual(LIMIT);

    // The crash-looper is restarting again and again…
    await untilAsync(async () => (g.app.gw.mcpPool.status('crash')?.restarts ?? 0) >= 2, 'the crash-looper restarting', 15_000);
    expect(g.app.gw.mcpPool.status('crash')?.state).not.toBe('ready');

    // …while every other server answers its own calls.
    for (const n of names) {
      const r = await whoami(g, n);
      expect(r.status, r.text).toBe(200);
      expect(r.text).toContain(`${n} `);
    }

    // A reload while it loops: a new server is added and an old one removed, both applied.
    const restartsBefore = g.app.gw.mcpPool.status('crash')?.restarts ?? 0;
    g.writeTool('s99.yaml', tiny('s99'));
    rmSync(join(g.toolsDir, 's00.yaml'));
    const result = await g.app.gw.reload();
    expect(result.added.length + result.removed.length).toBeGreaterThan(0);
    await g.app.gw.mcp.settled();
    const added = await whoami(g, 's99');
    expect(added.status, added.text).toBe(200);
    expect(added.text).toContain('s99 ');
    expect((await whoami(g, 's00')).status).toBe(404);
    for (const n of names.slice(1)) expect((await whoami(g, n)).status).toBe(200);

    // And it kept looping all along (it neither stopped nor was the reload waiting for it).
    await untilAsync(async () => (g.app.gw.mcpPool.status('crash')?.restarts ?? 0) > restartsBefore, 'the crash-looper restarting again', 15_000);
  }, 120_000);
});
