import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { Upstream } from '../helpers/upstream.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { until } from '../helpers/wait.js';

/**
 * What toolgate guarantees when it is killed (-9) between an approval and the call's end:
 * the approval is on disk before the call starts, and the call never runs a second time.
 */
describe('kill -9 between approval and execution', () => {
  let up: Upstream;
  const held: ServerResponse[] = [];
  const files = () => ({
    config: { auth: { keys: [{ id: 'agent-1', key: 'k-agent-crash-1' }, { id: 'ops', key: 'k-ops-crash-1', roles: ['approver'] }] } },
    tools: {
      'wipe.yaml': {
        name: 'db.wipe',
        description: 'Wipes a table',
        sideEffect: 'destructive',
        inputSchema: { type: 'object', properties: { table: { type: 'string' } } },
        backends: [{ id: 'api', http: { method: 'POST', url: `${up.url}/wipe`, body: '{{arguments}}' } }],
      },
    },
  });
  const post = (s: ServerProcess, path: string, key: string, body: unknown) =>
    fetch(`${s.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((_req, res) => void held.push(res)); // the upstream never answers: the gateway dies mid-call
  });
  afterAll(async () => {
    held.forEach((r) => r.destroy());
    await up.close();
  });

  it('keeps the approval record and never runs the call twice', async () => {
    const first = await startServerProcess(files());
    const asked = await post(first, '/v1/tools/db.wipe/call', 'k-agent-crash-1', { arguments: { table: 'users' } });
    expect(asked.status).toBe(202);
    const { confirmation } = (await asked.json()) as { confirmation: { id: string } };

    const approving = post(first, `/v1/confirmations/${confirmation.id}/approve`, 'k-ops-crash-1', {}).catch((e: unknown) => e);
    await until(() => up.seen.length === 1, 'the call reaching the upstream');
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    expect(await approving).toBeInstanceOf(Error); // the approver's connection died with the gateway

    const records = readFileSync(first.auditFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    const mine = records.filter((r) => r.confirmationId === confirmation.id);
    expect(mine.map((r) => r.outcome)).toEqual(['pending_confirmation', 'approved']);
    expect(mine[1]).toMatchObject({ approver: 'ops', tool: 'db.wipe' });

    const second = await startServerProcess({ ...files(), dir: first.dir });
    try {
      const again = await post(second, `/v1/confirmations/${confirmation.id}/approve`, 'k-ops-crash-1', {});
      expect([404, 409]).toContain(again.status); // in-memory state died with the process; Redis keeps the decision (409)
      expect(up.seen).toHaveLength(1);
    } finally {
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    }
  });
});
