import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { lineSink } from '../helpers/log-lines.js';
import { createLogger } from '../../src/logger.js';

// The keys a pasted client file has and toolgate ignores are told to the operator in the
// gateway's own log (not only by `toolgate check`), once, not on every reload.

describe('ignored keys of a pasted client file, in the gateway log', () => {
  let gw: TestGateway;
  const lines: string[] = [];
  const warnings = () => lines.map((l) => JSON.parse(l) as { level: number; msg: string; file?: string }).filter((l) => l.level === 40 && l.file?.endsWith('claude_desktop_config.json'));

  beforeAll(async () => {
    gw = await startGateway({
      logger: createLogger('info', new Set(), lineSink(lines)),
      tools: {
        'claude_desktop_config.json': {
          globalShortcut: 'Ctrl+Space',
          mcpServers: { Memory: { command: 'nodee-does-not-exist', args: [], autoApprove: ['read_graph'] } },
        },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('names each ignored key once, with its file, and a reload does not repeat it', async () => {
    await gw.app.inject({ method: 'POST', url: '/admin/reload' });
    const first = warnings().map((w) => w.msg).join('\n');
    expect(first).toMatch(/globalShortcut/);
    expect(first).toMatch(/autoApprove/);
    const count = warnings().length;
    await gw.app.inject({ method: 'POST', url: '/admin/reload' });
    await gw.app.inject({ method: 'POST', url: '/admin/reload' });
    expect(warnings().length).toBe(count);
  });
});
