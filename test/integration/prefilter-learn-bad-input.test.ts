import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { echoTool, startGateway, type TestGateway } from '../helpers/app.js';
import { CALLER_TOOL_CAP } from '../../src/prefilter/learn/learner.js';

const KEYS = { agent: 'lb-agent-key-0000001', skew: 'lb-skew-key-00000002', skew2: 'lb-skew2-key-0000003', admin: 'lb-admin-key-0000004' };
const city = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
const tools = {
  'current.yaml': echoTool('weather.current', { description: 'Current weather for a city: temperature, wind and rain right now.', inputSchema: city }),
  'mail.yaml': echoTool('mail.send', { description: 'Send an email message to a recipient.' }),
  'notes.yaml': echoTool('notes.add', { description: 'Add a short note to the notebook.' }),
  'cal.yaml': echoTool('calendar.create_event', { description: 'Create an event in the calendar.' }),
  'pdf.yaml': echoTool('pdf.extract_text', { description: 'Extract the text of a PDF document.' }),
};
type Candidate = { name: string; score: number };
type Result = { isError?: boolean; content?: { type: string; text?: string }[]; structuredContent?: { candidates: { name: string }[] } };

/** prefilter.learn against bad input: floods, a skewing caller, bad find_tools queries, over real HTTP and the v2 SDK client. */
describe('prefilter.learn: bad input', () => {
  let gw: TestGateway;
  let base: string;
  const clients: Client[] = [];
  const req = async (method: string, path: string, key: string, body?: unknown) => {
    const res = await fetch(base + path, { method, headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const text = await res.text();
    return { status: res.status, json: (text ? JSON.parse(text) : undefined) as any };
  };
  const route = async (query: string, key = KEYS.agent, sessionId?: string) =>
    (await req('POST', '/v1/route', key, { query, k: 5, ...(sessionId ? { sessionId } : {}) })).json.candidates as Candidate[];
  const call = (name: string, args: unknown, sessionId: string, key = KEYS.agent) => req('POST', `/v1/tools/${name}/call`, key, { arguments: args, sessionId });
  const learner = () => gw.app.gw.learner!;
  const learned = async () => {
    await learner().settled();
    return (await req('GET', '/admin/prefilter/learned', KEYS.admin)).json.tools as Record<string, Record<string, number>>;
  };
  const reset = async () => {
    for (const t of Object.keys(await learned())) expect((await req('DELETE', `/admin/prefilter/learned/${t}`, KEYS.admin)).status).toBe(200);
    expect(await learned()).toEqual({});
  };

  beforeAll(async () => {
    gw = await startGateway({
      config: {
        auth: {
          keys: [
            { id: 'agent', key: KEYS.agent, roles: ['agent'] },
            { id: 'skew', key: KEYS.skew, roles: ['agent'] },
            { id: 'skew2', key: KEYS.skew2, roles: ['agent'] },
            { id: 'admin', key: KEYS.admin, roles: ['agent', 'admin'] },
          ],
        },
        mcp: { toolSearch: { enabled: true, k: 2 } },
        prefilter: { learn: { enabled: true, windowSeconds: 600 } },
      },
      tools,
    });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await gw?.close();
  });

  it("a caller who calls the same tool after every query moves other callers' ranking no further than the cap allows", async () => {
    await reset();
    const query = 'weather in Paris with rain and wind';
    const skewed = async (key: string, from: number, to: number) => {
      for (let i = from; i < to; i++) {
        await route(query, key, `skew-${key}-${i}`);
        expect((await call('mail.send', {}, `skew-${key}-${i}`, key)).status).toBe(200);
      }
      await learner().settled();
    };
    const before = await route(query);
    expect(before[0]?.name).toBe('weather.current');
    await skewed(KEYS.skew, 0, CALLER_TOOL_CAP);
    const atCap = await learned();
    const rankedAtCap = await route(query);
    const capped = learner().counters.capped;
    await skewed(KEYS.skew, CALLER_TOOL_CAP, 40);
    // 37 more events from the same caller: all dropped, the statistics and everyone's ranking as at the cap.
    expect(learner().counters.capped - capped).toBe(40 - CALLER_TOOL_CAP);
    expect(await learned()).toEqual(atCap);
    const after = await route(query);
    expect(after.map((c) => c.name)).toEqual(rankedAtCap.map((c) => c.name));
    after.forEach((c, i) => expect(c.score).toBeCloseTo(rankedAtCap[i]!.score, 3));
    // A second caller adds its own capped share, no more (weight 1 each: mail.send is a candidate by now).
    await skewed(KEYS.skew2, 0, 40);
    const two = await learned();
    expect(Object.keys(atCap['mail.send'] ?? {}).length).toBeGreaterThan(0);
    for (const [term, w] of Object.entries(atCap['mail.send'] ?? {})) expect(two['mail.send']?.[term]).toBeCloseTo(w + CALLER_TOOL_CAP, 3);
  });

  it('a flood of searches in one session leaves one pending search: the call teaches only the last query, once', async () => {
    await reset();
    const n = learner().counters.learned;
    const words = Array.from({ length: 50 }, (_, i) => `zq${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}x`);
    await Promise.all(words.map((w) => route(`${w} note`, KEYS.agent, 's-flood')));
    await learner().settled();
    await route('plonkwort note', KEYS.agent, 's-flood');
    await learner().settled();
    expect((await call('notes.add', {}, 's-flood')).status).toBe(200);
    expect((await call('notes.add', {}, 's-flood')).status).toBe(200); // not the next call any more
    const f = await learned();
    expect(learner().counters.learned - n).toBe(1);
    const terms = Object.keys(f['notes.add'] ?? {});
    expect(terms.some((t) => t.startsWith('plonkwort'))).toBe(true);
    expect(terms.filter((t) => t.startsWith('zq'))).toEqual([]);
    expect(Object.keys(f)).toEqual(['notes.add']);
  });

  it('a call refused (an unknown tool, arguments that fail the schema, a body that is no object) teaches nothing and leaves the search pending', async () => {
    await reset();
    await route('snorkelwidget now', KEYS.agent, 's-refused');
    expect((await call('no.such_tool', {}, 's-refused')).status).toBe(404);
    expect((await call('weather.current', { town: 'Paris' }, 's-refused')).status).toBe(422);
    expect((await call('weather.current', 'not an object', 's-refused')).status).toBe(400);
    expect(await learned()).toEqual({});
    expect((await call('weather.current', { city: 'Paris' }, 's-refused')).status).toBe(200);
    expect(Object.keys((await learned())['weather.current'] ?? {})).toContain('snorkelwidget');
  });

  it('an import over the body limit (32 MiB) is 413 with the typed error, and nothing changes', async () => {
    await reset();
    await req('PUT', '/admin/prefilter/learned', KEYS.admin, { version: 1, kind: 'toolgate.prefilter.learned', tools: { 'notes.add': { plugh: 3 } } });
    const before = await learned();
    const huge = JSON.stringify({ version: 1, kind: 'toolgate.prefilter.learned', tools: { 'mail.send': { x: 1 } }, pad: 'x'.repeat(33 * 2 ** 20) });
    const res = await fetch(`${base}/admin/prefilter/learned`, { method: 'PUT', headers: { authorization: `Bearer ${KEYS.admin}`, 'content-type': 'application/json' }, body: huge });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await learned()).toEqual(before);
    expect((await route('plugh'))[0]?.name).toBe('notes.add');
  });

  it('over /mcp (v2 SDK client): find_tools then a call teaches; an empty, 10 KB or binary query is refused and teaches nothing', async () => {
    await reset();
    const connect = async () => {
      const client = new Client({ name: 'learn-bad-input', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${KEYS.agent}` } } }));
      clients.push(client);
      return client;
    };
    const a = await connect();
    const search = async (c: Client, query: unknown) => (await c.callTool({ name: 'find_tools', arguments: { query } })) as Result;
    const callIt = async (c: Client, name: string, args: Record<string, unknown>) => (await c.callTool({ name, arguments: args })) as Result;
    const shown = (canonical: string) => gw.app.gw.registry.get(canonical)!.providerName;
    const searches = learner().counters.searches;
    for (const q of ['', 'weather '.repeat(1280), Buffer.from([0xff, 0xfe, 0x00, 0x81]).toString('utf8'), 'weather\u0000\u0001']) {
      const r = await search(a, q);
      expect(r.isError).toBe(true);
      expect((r.content ?? [])[0]?.text).toMatch(/^Error INVALID_ARGUMENTS: /);
    }
    expect(learner().counters.searches).toBe(searches); // no pending search
    expect((await callIt(a, shown('pdf.extract_text'), {})).isError).toBeFalsy();
    expect(await learned()).toEqual({});

    // A real search, then the call the model makes: the next session's search finds it.
    const found = await search(a, 'brolly for tomorrow');
    expect(found.isError).toBeFalsy();
    expect(found.structuredContent!.candidates.map((c) => c.name)).not.toContain(shown('weather.current'));
    expect((await callIt(a, shown('weather.current'), { city: 'Paris' })).isError).toBeFalsy();
    await learner().settled();
    const b = await connect();
    expect((await search(b, 'a brolly'))?.structuredContent!.candidates[0]?.name).toBe(shown('weather.current'));
    expect(JSON.stringify(await learned())).not.toMatch(/brolly for tomorrow/);
  });
});
