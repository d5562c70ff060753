import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { TestRedis } from '../helpers/redis.js';
import { untilAsync } from '../helpers/wait.js';

const tool = (name: string, description: string) => ({ name, description, sideEffect: 'read', backends: [{ id: 'b', builtin: 'echo' }] });
const tools = {
  'weather.yaml': tool('weather.current', 'Current weather conditions for a city: temperature, wind and rain.'),
  'email.yaml': tool('email.send', 'Send an email message to a recipient with a subject and body.'),
  'notes.yaml': tool('notes.add', 'Add a short note to the notebook.'),
};

/** prefilter.learn with a real redis-server shared by two gateways over real HTTP. */
describe('prefilter.learn shared through Redis', () => {
  let redis: TestRedis;
  const gws: TestGateway[] = [];
  const bases: string[] = [];
  const start = async () => {
    const gw = await startGateway({ config: { state: { redis: redis.url }, prefilter: { learn: { enabled: true, windowSeconds: 30 } } }, tools });
    gws.push(gw);
    bases.push(await gw.app.listen({ port: 0, host: '127.0.0.1' }));
    return gws.length - 1;
  };
  const post = async (i: number, path: string, body: unknown) => {
    const res = await fetch(bases[i] + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as any };
  };
  const top = async (i: number, query: string) => ((await post(i, '/v1/route', { query, explain: true })).json.candidates as { name: string; why?: { learned?: string[] } }[])[0];

  beforeAll(async () => {
    redis = await TestRedis.start();
    await start();
    await start();
  });
  afterAll(async () => {
    await Promise.all(gws.map((g) => g.close()));
    await redis?.stop('SIGTERM');
  });

  it('a route on one replica and the call on the other teach both replicas', async () => {
    expect((await top(0, 'a brolly please'))?.name).not.toBe('weather.current');
    await post(0, '/v1/route', { query: 'a brolly please', sessionId: 'r-1' });
    expect((await post(1, '/v1/tools/weather.current/call', { arguments: {}, sessionId: 'r-1' })).status).toBe(200);
    await gws[1]!.app.gw.learner!.settled();
    expect((await top(1, 'brolly'))?.name).toBe('weather.current');
    // The other replica's copy follows within its refresh period.
    await untilAsync(async () => (await top(0, 'brolly'))?.name === 'weather.current', 'replica 0 learned', 8000);
    expect((await top(0, 'brolly'))?.why?.learned).toEqual(['brolli']);
  });

  it('keeps what was learned across a restart, and an import or reset reaches every replica', async () => {
    await gws[0]!.close();
    const c = await start();
    await untilAsync(async () => (await top(c, 'brolly'))?.name === 'weather.current', 'a new replica loaded the statistics', 8000);
    const put = await fetch(bases[c] + '/admin/prefilter/learned', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ version: 1, kind: 'toolgate.prefilter.learned', tools: { 'notes.add': { plugh: 5 }, 'weather.current': { brolli: 4 } } }),
    });
    expect(put.status).toBe(200);
    await untilAsync(async () => (await top(1, 'plugh'))?.name === 'notes.add', 'replica 1 imported', 8000);
    const del = await fetch(bases[1] + '/admin/prefilter/learned/notes.add', { method: 'DELETE' });
    expect(await del.json()).toEqual({ tool: 'notes.add', reset: true });
    await untilAsync(async () => (await top(c, 'plugh'))?.name !== 'notes.add', 'replica c reset', 8000);
    const file = (await (await fetch(bases[c] + '/admin/prefilter/learned')).json()) as { tools: Record<string, unknown> };
    expect(Object.keys(file.tools)).toEqual(['weather.current']);
  });

  it('with Redis killed, ranking goes on with the last copy and learning pauses (counted)', async () => {
    const gw = gws[1]!.app.gw;
    await redis.stop('SIGKILL');
    expect((await top(1, 'brolly'))?.name).toBe('weather.current');
    const paused = gw.learner!.counters.paused;
    const r = await post(1, '/v1/route', { query: 'gazump', sessionId: 'r-down' });
    expect(r.status).toBe(200);
    await gw.learner!.settled();
    expect(gw.learner!.counters.paused).toBeGreaterThan(paused);
    const learnedBefore = gw.learner!.counters.learned;
    expect((await post(1, '/v1/tools/notes.add/call', { arguments: {}, sessionId: 'r-down' })).status).toBe(200); // the call runs
    await gw.learner!.settled();
    expect(gw.learner!.counters.learned).toBe(learnedBefore); // nothing learned while the store is away
    expect((await top(1, 'gazump'))?.name).not.toBe('notes.add');
    expect((await top(1, 'brolly'))?.name).toBe('weather.current');
    await redis.restart();
  });

  it('when Redis is back, learning resumes (the client reconnects by itself)', async () => {
    const gw = gws[1]!.app.gw;
    let i = 0;
    await untilAsync(async () => {
      const s = `r-back-${i++}`;
      await post(1, '/v1/route', { query: 'quibbleflux', sessionId: s });
      await post(1, '/v1/tools/notes.add/call', { arguments: {}, sessionId: s });
      await gw.learner!.settled();
      return (await top(1, 'quibbleflux'))?.name === 'notes.add';
    }, 'learning resumed', 15000);
    expect((await top(1, 'quibbleflux'))?.why?.learned).toEqual(['quibbleflux']);
  });
});
