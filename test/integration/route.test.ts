import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/app.js';

const tool = (name: string, description: string, extra: Record<string, unknown> = {}) => ({
  name,
  description,
  sideEffect: 'read',
  backends: [{ id: 'b', builtin: 'echo' }],
  ...extra,
});

/** POST /v1/route: the contract and the ranking rules, on a small registry. */
describe('POST /v1/route', () => {
  let gw: TestGateway;
  const route = (body: Record<string, unknown>, key?: string) =>
    gw.app.inject({ method: 'POST', url: '/v1/route', payload: body, headers: key ? { authorization: `Bearer ${key}` } : {} });
  const names = (res: { json(): { candidates: { name: string }[] } }) => res.json().candidates.map((c) => c.name);

  beforeAll(async () => {
    gw = await startGateway({
      config: {
        auth: {
          keys: [
            { id: 'agent', key: 'route-agent-key', roles: ['agent'] },
            { id: 'admin', key: 'route-admin-key', roles: ['agent', 'admin'] },
          ],
        },
      },
      tools: {
        'weather.yaml': tool('weather.current', 'Current weather conditions for a city: temperature, wind and rain.', {
          tags: ['weather'],
          inputSchema: { type: 'object', properties: { city: { type: 'string', description: 'city name' } } },
        }),
        'email.yaml': tool('email.send', 'Send an email message to a recipient with a subject and body.', { sideEffect: 'external', aliases: ['mailer'] }),
        'files.yaml': tool('files.delete', 'Delete a file from the shared folder.', { sideEffect: 'destructive' }),
        'order.yaml': tool('order.lookup', '查询订单的状态和物流信息，输入订单号。'),
        'calendar.yaml': tool('calendar.create_event', 'Create a calendar event with a title, start time and attendees.', {
          examples: ['book a meeting with Anna tomorrow at 10', '安排明天上午的会议'],
        }),
        'hidden.yaml': tool('ops.rotate_keys', 'Rotate the weather API keys.', { visibility: { roles: ['admin'] } }),
        'noprefilter.yaml': tool('weather.internal_probe', 'Weather probe for the weather team.', { visibility: { prefilter: false } }),
        'flaky.yaml': {
          ...tool('weather.forecast', 'Weather forecast for the next days in a city.'),
          retry: { attempts: 1 },
          breaker: { failureThreshold: 1, volumeThreshold: 1, resetTimeoutMs: 600000 },
          backends: [{ id: 'down', http: { url: 'http://127.0.0.1:9/forecast' } }],
        },
      },
    });
  });
  afterAll(() => gw.close());

  it('ranks by meaning of the words, best first, k defaulting to 5', async () => {
    const res = await route({ query: 'what is the temperature in Paris today?' }, 'route-agent-key');
    expect(res.statusCode).toBe(200);
    expect(names(res)[0]).toBe('weather.current');
    expect(res.json().candidates.length).toBeLessThanOrEqual(5);
    const scores = res.json().candidates.map((c: { score: number }) => c.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it('puts a tool the user names outright first (canonical, provider name or alias)', async () => {
    for (const q of ['please use email.send to tell Bob about the weather', 'call email__send now about the weather', 'ask the mailer about weather in Paris']) {
      expect(names(await route({ query: q }, 'route-agent-key'))[0]).toBe('email.send');
    }
  });

  it('never offers hidden or prefilter:false tools, even when named', async () => {
    const res = await route({ query: 'rotate the weather API keys with ops.rotate_keys, or weather.internal_probe', k: 20 }, 'route-agent-key');
    expect(names(res)).not.toContain('ops.rotate_keys');
    expect(names(res)).not.toContain('weather.internal_probe');
    const admin = await route({ query: 'rotate the weather API keys with ops.rotate_keys' }, 'route-admin-key');
    expect(names(admin)[0]).toBe('ops.rotate_keys');
  });

  it('finds an English-described tool from a Chinese query', async () => {
    expect(names(await route({ query: '北京现在天气怎么样' }, 'route-agent-key'))[0]).toBe('weather.current');
    expect(names(await route({ query: '给张三发一封邮件' }, 'route-agent-key'))[0]).toBe('email.send');
    expect(names(await route({ query: '删除共享文件夹里的文件' }, 'route-agent-key'))[0]).toBe('files.delete');
  });

  it('finds a Chinese-described tool from an English query, and handles mixed script', async () => {
    expect(names(await route({ query: 'where is my order? check the shipping status' }, 'route-agent-key'))[0]).toBe('order.lookup');
    expect(names(await route({ query: '帮我 book a meeting 明天' }, 'route-agent-key'))[0]).toBe('calendar.create_event');
  });

  it('demotes a tool whose every backend is open, and says why', async () => {
    await gw.call('weather.forecast', {}, { key: 'route-agent-key' });
    const open = await gw.call('weather.forecast', {}, { key: 'route-agent-key' });
    expect(open.json().error.code).toBe('CIRCUIT_OPEN');
    const res = await route({ query: 'weather forecast for the next days in Oslo', k: 8 }, 'route-agent-key');
    const list = res.json().candidates as { name: string; why?: { demoted?: string } }[];
    const forecast = list.findIndex((c) => c.name === 'weather.forecast');
    expect(forecast).toBeGreaterThan(list.findIndex((c) => c.name === 'weather.current'));
    expect(list[forecast]?.why?.demoted).toContain('open');
  });

  it('returns candidates in a provider format, and explains matches', async () => {
    const res = await route({ query: 'send an email to my boss', format: 'openai', k: 2, explain: true }, 'route-agent-key');
    const body = res.json();
    expect(body.tools).toHaveLength(body.candidates.length);
    expect(body.tools[0]).toMatchObject({ type: 'function', function: { name: 'email__send' } });
    expect(body.candidates[0].why.matched.length).toBeGreaterThan(0);
  });

  it('copes with an empty and a 10 KB query; rejects k over the cap', async () => {
    const empty = await route({ query: '' }, 'route-agent-key');
    expect(empty.statusCode).toBe(200);
    expect(Array.isArray(empty.json().candidates)).toBe(true);
    const long = await route({ query: 'weather in Paris and '.repeat(500).slice(0, 10240) }, 'route-agent-key');
    expect(long.statusCode).toBe(200);
    expect(names(long)[0]).toBe('weather.current');
    expect((await route({ query: 'x', k: 500 }, 'route-agent-key')).statusCode).toBe(400);
    expect((await route({ query: 'x' })).statusCode).toBe(401);
  });

  it('observes toolgate_route_duration_seconds', async () => {
    const text = (await gw.app.inject({ method: 'GET', url: '/metrics' })).body;
    const count = /toolgate_route_duration_seconds_count (\d+)/.exec(text);
    expect(Number(count?.[1])).toBeGreaterThan(5);
  });
});
