import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { adminMcpView } from '../helpers/mcp-admin.js';
import { untilAsync } from '../helpers/wait.js';

// A Claude-Desktop-style file as users paste it (a capitalized, dotted name, Cline's keys, a
// disabled server, a command that does not exist) served by a real gateway and real stdio servers.

const ADMIN = 'admin-key-0123456789';
const server = fileURLToPath(new URL('../fixtures/mcp/v2-server.mjs', import.meta.url));

describe('a pasted mcpServers file, served', () => {
  let gw: TestGateway;
  const { view } = adminMcpView(() => gw, ADMIN);

  beforeAll(async () => {
    gw = await startGateway({
      config: { auth: { keys: [{ id: 'ops', key: ADMIN, roles: ['admin', 'agent'] }] } },
      tools: {
        'claude_desktop_config.json': {
          globalShortcut: 'Ctrl+Space',
          mcpServers: {
            'Echo.Server': { command: process.execPath, args: [server, '--era', 'legacy'], alwaysAllow: ['echo'], timeout: 4000 },
            Off: { command: process.execPath, args: [server], disabled: true },
            Typo: { command: 'nodee-does-not-exist', args: ['server.js'] },
          },
        },
      },
    });
  }, 30000);
  afterAll(async () => {
    await gw?.close();
  });

  it('imports the normalized server, skips the disabled one, and keeps the broken one as a server that fails with its cause', async () => {
    await untilAsync(async () => (await view()).some((s) => s.name === 'echo-server' && s.state === 'up'), 'echo-server up', 15000);
    await untilAsync(async () => (await view()).some((s) => s.name === 'typo' && s.lastError !== null), 'typo failed', 15000);
    const servers = await view();
    expect(servers.map((s) => s.name).sort()).toEqual(['echo-server', 'typo']);
    expect(servers.find((s) => s.name === 'typo')?.lastError).toMatch(/ENOENT/);
    expect(gw.app.gw.registry.problems).toEqual([]);
    const tool = gw.app.gw.registry.get('echo-server.echo');
    expect(tool?.timeoutMs).toBe(4000);
  }, 30000);
});
