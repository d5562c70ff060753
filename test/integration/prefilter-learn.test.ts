import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { CALLER_TOOL_CAP, MISSED_WEIGHT } from '../../src/prefilter/learn/learner.js';

const tool = (name: string, description: string, extra: Record<string, unknown> = {}) => ({
  name,
  description,
  sideEffect: 'read',
  backends: [{ id: 'b', builtin: 'echo' }],
  ...extra,
});
const AGENT = 'learn-agent-key';
const OTHER = 'learn-other-key';
const ADMIN = 'learn-admin-key';
const WINDOW_S = 2;

interface Candidate { name: string; score: number; why?: { matched: string[]; learned?: string[] } }
type LearnedFile = { version: number; kind: string; tools: Record<string, Record<string, number>> };

/** prefilter.learn over real HTTP with the memory store: a session's next call teaches the ranker. */
describe('prefilter.learn (memory store)', () => {
  let gw: TestGateway;
  let base: string;
  const req = async (method: string, path: string, key: string, body?: unknown, raw?: string) => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined || raw !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(raw !== undefined ? { body: raw } : body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, json: (text ? JSON.parse(text) : undefined) as any };
  };
  const route = async (query: string, sessionId?: string, key = AGENT) =>
    (await req('POST', '/v1/route', key, { query, explain: true, k: 5, ...(sessionId ? { sessionId } : {}) })).json.candidates as Candidate[];
  const call = (name: string, args: unknown, sessionId: string, key = AGENT) => req('POST', `/v1/tools/${name}/call`, key, { arguments: args, sessionId });
  const learned = async (): Promise<LearnedFile> => {
    await gw.app.gw.learner!.settled();
    return (await req('GET', '/admin/prefilter/learned', ADMIN)).json;
  };
  const settle = () => gw.app.gw.learner!.settled();

  beforeAll(async () => {
    gw = await startGateway({
      config: {
        auth: { keys: [{ id: 'agent', key: AGENT, roles: ['agent'] }, { id: 'other', key: OTHER, roles: ['agent'] }, { id: 'admin', key: ADMIN, roles: ['agent', 'admin'] }] },
        prefilter: { learn: { enabled: true, windowSeconds: WINDOW_S } },
      },
      tools: {
        'weather.yaml': tool('weather.current', 'Current weather conditions for a city: temperature, wind and rain.', {
          inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
        }),
        'email.yaml': tool('email.send', 'Send an email message to a recipient with a subject and body.'),
        'files.yaml': tool('files.delete', 'Delete a file from the shared folder.', { sideEffect: 'destructive', confirm: true }),
        'calendar.yaml': tool('calendar.create_event', 'Create a calendar event with a title, start time and attendees.', { rateLimit: { requests: 1, windowSeconds: 60 } }),
        'notes.yaml': tool('notes.add', 'Add a short note to the notebook.'),
      },
    });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => gw.close());

  it('a session calling a tool after a route query teaches it that query; explain names the learned terms', async () => {
    expect((await route('will I need a brolly tomorrow')).map((c) => c.name)).not.toContain('weather.current');
    await route('will I need a brolly tomorrow', 's-learn-1');
    expect((await call('weather.current', { city: 'Paris' }, 's-learn-1')).status).toBe(200);
    await settle();
    const after = await route('brolly needed?');
    expect(after[0]?.name).toBe('weather.current');
    expect(after[0]?.why?.learned).toEqual(['brolli']);
    // Terms only: the file holds the stems, never the query.
    const file = await learned();
    expect(file.tools['weather.current']).toMatchObject({ brolli: MISSED_WEIGHT, tomorrow: MISSED_WEIGHT });
    expect(JSON.stringify(file)).not.toMatch(/will I need|brolly/);
  });

  it('only the next call counts, within the window, in the same session of the same caller', async () => {
    await route('quux pancake', 's-next');
    await call('email.send', {}, 's-next', OTHER); // another caller, same session id: not this query's answer
    await call('notes.add', {}, 's-next');
    await call('email.send', {}, 's-next'); // not the next call any more
    await route('quux waffle', 's-late');
    await new Promise((r) => setTimeout(r, WINDOW_S * 1000 + 300));
    await call('email.send', {}, 's-late');
    const f = await learned();
    expect(Object.keys(f.tools['notes.add'] ?? {})).toEqual(expect.arrayContaining(['quux', 'pancak']));
    expect(f.tools['email.send']?.['quux']).toBeUndefined();
    expect(f.tools['email.send']?.['waffl']).toBeUndefined();
  });

  it('never learns from calls refused by validation, a gate or a rate limit; the next call that runs does', async () => {
    await route('zorblat weather', 's-refused');
    expect((await call('weather.current', { town: 'Paris' }, 's-refused')).status).toBe(422);
    expect((await call('files.delete', {}, 's-refused')).status).toBe(202); // waits for approval
    expect((await call('calendar.create_event', {}, 's-refused')).status).toBe(200); // the first call that runs
    const f1 = await learned();
    expect(f1.tools['weather.current']?.['zorblat']).toBeUndefined();
    expect(f1.tools['files.delete']).toBeUndefined();
    expect(f1.tools['calendar.create_event']?.['zorblat']).toBe(MISSED_WEIGHT);
    await route('glimmet schedule', 's-limited');
    expect((await call('calendar.create_event', {}, 's-limited')).status).toBe(429);
    expect((await learned()).tools['calendar.create_event']?.['glimmet']).toBeUndefined();
  });

  it('a caller calling the same tool after every query is capped', async () => {
    const skew = 'frobnicate';
    for (let i = 0; i < 10; i++) {
      await route(`${skew} number ${i}`, `s-skew-${i}`, OTHER);
      expect((await call('email.send', {}, `s-skew-${i}`, OTHER)).status).toBe(200);
    }
    const f = await learned();
    // Once learned, email.send is among the candidates, so later events weigh 1, not MISSED_WEIGHT.
    const w = f.tools['email.send']?.['frobnic'] ?? 0;
    expect(w).toBeGreaterThanOrEqual(CALLER_TOOL_CAP);
    expect(w).toBeLessThanOrEqual(CALLER_TOOL_CAP * MISSED_WEIGHT);
    expect(gw.app.gw.learner!.counters.capped).toBeGreaterThanOrEqual(10 - CALLER_TOOL_CAP);
  });

  it('exports a versioned file, imports it back, resets one tool; malformed or too large imports change nothing', async () => {
    const before = await learned();
    expect(before).toMatchObject({ version: 1, kind: 'toolgate.prefilter.learned' });
    const bad: [string, unknown, string?][] = [
      ['not JSON', undefined, '{"version": 1, "tools": {'],
      ['wrong version', { ...before, version: 2 }],
      ['no kind', { version: 1, tools: {} }],
      ['a negative weight', { ...before, tools: { 'email.send': { x: -1 } } }],
      ['a weight that is text', { ...before, tools: { 'email.send': { x: 'lots' } } }],
      ['an unknown field', { ...before, query: 'leak' }],
      ['too many terms for a tool', { ...before, tools: { 'email.send': Object.fromEntries(Array.from({ length: 49 }, (_, i) => [`t${i}`, 1])) } }],
      ['too many tools', { ...before, tools: Object.fromEntries(Array.from({ length: 20001 }, (_, i) => [`t.${i}`, { x: 1 }])) }],
      ['a term too long', { ...before, tools: { 'email.send': { ['x'.repeat(41)]: 1 } } }],
    ];
    for (const [what, body, raw] of bad) {
      const res = await req('PUT', '/admin/prefilter/learned', ADMIN, body, raw);
      expect(res.status, what).toBe(400);
      expect(res.json.error.code, what).toBe('BAD_REQUEST');
      expect(JSON.stringify(res.json), what).not.toMatch(/at .*\.ts:\d+/);
    }
    expect((await learned()).tools).toEqual(before.tools);
    expect((await req('PUT', '/admin/prefilter/learned', AGENT, before)).status).toBe(403);

    const imported = { version: 1, kind: 'toolgate.prefilter.learned', tools: { 'notes.add': { plugh: 10 } } };
    expect((await req('PUT', '/admin/prefilter/learned', ADMIN, imported)).json).toEqual({ tools: 1, terms: 1 });
    expect((await route('plugh'))[0]?.name).toBe('notes.add');
    expect(Object.keys((await learned()).tools)).toEqual(['notes.add']);
    expect((await req('DELETE', '/admin/prefilter/learned/notes.add', ADMIN)).json).toEqual({ tool: 'notes.add', reset: true });
    expect((await req('DELETE', '/admin/prefilter/learned/notes.add', ADMIN)).json).toEqual({ tool: 'notes.add', reset: false });
    expect((await route('plugh')).map((c) => c.name)).not.toContain('notes.add');
    expect((await req('PUT', '/admin/prefilter/learned', ADMIN, before)).status).toBe(200);
    expect((await learned()).tools).toEqual(before.tools);
  });

  it('rejects a bad session id on /v1/route with 400', async () => {
    for (const sessionId of ['', 'x'.repeat(257), { id: 1 }]) {
      const res = await req('POST', '/v1/route', AGENT, { query: 'weather', sessionId });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe('BAD_REQUEST');
    }
  });
});

describe('prefilter.learn off (the default)', () => {
  it('learns nothing and the admin routes say so', async () => {
    const gw = await startGateway({ tools: { 'n.yaml': tool('notes.add', 'Add a short note.') } });
    try {
      const r = await gw.app.inject({ method: 'POST', url: '/v1/route', payload: { query: 'xyzzy', sessionId: 's' } });
      expect(r.statusCode).toBe(200);
      expect((await gw.call('notes.add', {}, { sessionId: 's' })).statusCode).toBe(200);
      expect(gw.app.gw.learner).toBeUndefined();
      const res = await gw.app.inject({ method: 'GET', url: '/admin/prefilter/learned' });
      expect(res.statusCode).toBe(409);
      expect(res.json().error.code).toBe('CONFLICT');
    } finally {
      await gw.close();
    }
  });
});
