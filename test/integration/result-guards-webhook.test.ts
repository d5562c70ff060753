import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpTool, startGateway, type TestGateway } from '../helpers/app.js';
import { json, Upstream } from '../helpers/upstream.js';

// The webhook result guard against a real guard service on 127.0.0.1 that allows, redacts, refuses,
// hangs, answers garbage, 500, a redirect, too much, or too late for the call's deadline.

const AWS_KEY = 'AKIAQ3EGRTZ5LWXN4PKD';
const TEXT = `Patient Bob Stone has the flu; key ${AWS_KEY}.`;

interface Body {
  callId: string;
  durationMs: number;
  result: { content: { type: string; text?: string }[]; structuredContent?: unknown };
  policy: { findings?: { kind: string; action: string; count: number; note?: string }[] };
  error?: { code: string; modelMessage: string; retryable: boolean; details: Record<string, unknown>[] };
}

describe('the webhook result guard', () => {
  let gw: TestGateway;
  const up = new Upstream();
  const hook = new Upstream();
  let hung: (() => void)[] = [];

  beforeAll(async () => {
    await up.start();
    up.on((req, res) => {
      if (req.url?.startsWith('/json')) return json(res, 200, { note: TEXT });
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(TEXT);
    });
    await hook.start();
    hook.on((req, res, body) => {
      const path = req.url ?? '';
      if (path === '/allow') return json(res, 200, { action: 'allow' });
      if (path === '/redact') {
        const text = (JSON.parse(body) as { result: { content: { text: string }[] } }).result.content[0]!.text;
        const start = Buffer.byteLength(text.slice(0, text.indexOf('Bob Stone')));
        return json(res, 200, { action: 'redact', spans: [{ block: 0, start, end: start + Buffer.byteLength('Bob Stone'), kind: 'name' }] });
      }
      if (path === '/refuse') return json(res, 200, { action: 'refuse', reason: 'medical record' });
      if (path === '/hang') return void hung.push(() => res.destroy());
      if (path === '/garbage') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end('{"action": "allow"'); // cut short
      }
      if (path === '/unknown') return json(res, 200, { action: 'maybe' });
      if (path === '/500') return json(res, 500, { action: 'allow' });
      if (path === '/redirect') {
        res.writeHead(302, { location: `${hook.url}/allow` });
        return void res.end();
      }
      if (path === '/big') return json(res, 200, { action: 'allow', pad: 'x'.repeat(100 * 1024) });
      if (path === '/badspans') return json(res, 200, { action: 'redact', spans: [{ block: 0, start: 0, end: 10_000 }] });
      if (path === '/slow') return void setTimeout(() => json(res, 200, { action: 'allow' }), 3000);
      json(res, 404, {});
    });
    const tool = (name: string, path: string, opts: { failOpen?: boolean; timeoutMs?: number; toolTimeoutMs?: number; json?: boolean } = {}) =>
      httpTool(name, `${up.url}/${opts.json ? 'json' : 'text'}`, {
        ...(opts.toolTimeoutMs ? { timeoutMs: opts.toolTimeoutMs } : {}),
        resultGuards: [{ webhook: { url: `${hook.url}${path}`, timeoutMs: opts.timeoutMs ?? 400, failOpen: opts.failOpen ?? false, headers: { 'x-guard-key': 'k1' } } }],
      });
    gw = await startGateway({
      tools: {
        'allow.yaml': tool('wh.allow', '/allow'),
        'redact.yaml': tool('wh.redact', '/redact'),
        'redact-json.yaml': tool('wh.redactjson', '/redact', { json: true }),
        'refuse.yaml': tool('wh.refuse', '/refuse'),
        'hang.yaml': tool('wh.hang', '/hang'),
        'hang-open.yaml': tool('wh.hangopen', '/hang', { failOpen: true }),
        'garbage.yaml': tool('wh.garbage', '/garbage'),
        'unknown.yaml': tool('wh.unknown', '/unknown'),
        'e500.yaml': tool('wh.e500', '/500'),
        'e500-open.yaml': tool('wh.e500open', '/500', { failOpen: true }),
        'redirect.yaml': tool('wh.redirect', '/redirect'),
        'big.yaml': tool('wh.big', '/big'),
        'badspans.yaml': tool('wh.badspans', '/badspans'),
        'slow.yaml': tool('wh.slow', '/slow', { timeoutMs: 10_000, toolTimeoutMs: 500 }),
        'off.yaml': httpTool('wh.off', `${up.url}/text`, { resultGuards: [{ webhook: 'off' }] }),
      },
      config: { defaults: { resultGuards: [{ secrets: 'redact' }, { invisible: 'strip' }, { webhook: { url: `${hook.url}/refuse` } }] } },
    });
  });

  afterAll(async () => {
    for (const h of hung.splice(0)) h();
    await gw?.close();
    await hook.close();
    await up.close();
  });

  const call = async (tool: string) => {
    const started = Date.now();
    const res = await gw.call(tool, {});
    return { status: res.statusCode, body: res.json<Body>(), ms: Date.now() - started };
  };
  const recordOf = async (tool: string) => (await gw.audit()).filter((r) => r['tool'] === tool && r['event'] === 'call').at(-1);

  it('allow: the service got { tool, callId, result } after the built-in redaction, with its headers', async () => {
    const seen = hook.seen.length;
    const { status, body } = await call('wh.allow');
    expect(status).toBe(200);
    expect(body.result.content[0]?.text).toBe('Patient Bob Stone has the flu; key [REDACTED:secret].');
    const sent = hook.seen.slice(seen).find((s) => s.url === '/allow')!;
    expect(sent.method).toBe('POST');
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.headers['x-guard-key']).toBe('k1');
    expect(JSON.parse(sent.body)).toEqual({ tool: 'wh.allow', callId: body.callId, result: body.result });
    expect(sent.body).not.toContain(AWS_KEY);
  });

  it('redact: each span becomes a typed placeholder; the audit notes where', async () => {
    const { status, body } = await call('wh.redact');
    expect(status).toBe(200);
    expect(body.result.content[0]?.text).toBe('Patient [REDACTED:name] has the flu; key [REDACTED:secret].');
    const record = await recordOf('wh.redact');
    expect(record?.['findings']).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'webhook', action: 'redact', count: 1, at: [{ path: '/content/0/text', start: 8, end: 17 }] })]));
    expect(JSON.stringify(record)).not.toContain('Bob Stone');
  });

  it('redact drops a structuredContent the spans cannot reach', async () => {
    const { body } = await call('wh.redactjson');
    expect(body.result.content[0]?.text).toContain('[REDACTED:name]');
    expect(body.result.structuredContent).toBeUndefined();
    expect(JSON.stringify(body)).not.toContain('Bob Stone');
  });

  it('refuse: 502 RESULT_REFUSED, the reason in details, the content withheld', async () => {
    const { status, body } = await call('wh.refuse');
    expect(status).toBe(502);
    expect(body.error?.code).toBe('RESULT_REFUSED');
    expect(body.error?.details[0]).toMatchObject({ upstreamRan: true, kinds: ['webhook'], reason: 'the webhook refused: medical record' });
    expect(JSON.stringify(body)).not.toContain('Bob');
    expect(await recordOf('wh.refuse')).toMatchObject({ errorCode: 'RESULT_REFUSED', findings: expect.arrayContaining([expect.objectContaining({ kind: 'webhook', action: 'refuse' })]) });
  });

  it('a service that hangs: failOpen false refuses within timeoutMs; failOpen true allows with a finding', async () => {
    const closed = await call('wh.hang');
    expect(closed.status).toBe(502);
    expect(closed.body.error?.code).toBe('RESULT_REFUSED');
    expect(closed.body.error?.details[0]?.['reason']).toMatch(/no answer within 400 ms/);
    expect(closed.ms).toBeLessThan(2000);

    const open = await call('wh.hangopen');
    expect(open.status).toBe(200);
    expect(open.body.result.content[0]?.text).toContain('Bob Stone');
    expect(open.body.policy.findings).toEqual([expect.objectContaining({ kind: 'webhook', action: 'flag', note: expect.stringMatching(/failed .*allowed \(failOpen\)/) })]);
    expect(open.ms).toBeLessThan(2000);
    expect((await recordOf('wh.hangopen'))?.['findings']).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'webhook', action: 'flag' })]));
  });

  it.each([
    ['wh.garbage', /not JSON/],
    ['wh.unknown', /not one of allow, redact or refuse/],
    ['wh.e500', /HTTP 500/],
    ['wh.redirect', /HTTP 302/],
    ['wh.big', /over 65536 bytes/],
    ['wh.badspans', /spans do not fit/],
  ])('%s is a failure: refused (failOpen false), never a 500, audited', async (tool, reason) => {
    const allowsBefore = hook.seen.filter((s) => s.url === '/allow').length;
    const { status, body } = await call(tool);
    expect(status).toBe(502);
    expect(body.error?.code).toBe('RESULT_REFUSED');
    expect(body.error?.details[0]?.['reason']).toMatch(reason);
    expect(hook.seen.filter((s) => s.url === '/allow').length).toBe(allowsBefore); // a redirect is not followed
    expect(await recordOf(tool)).toMatchObject({ outcome: 'error', errorCode: 'RESULT_REFUSED' });
  });

  it('a 500 with failOpen true allows and notes it', async () => {
    const { status, body } = await call('wh.e500open');
    expect(status).toBe(200);
    expect(body.policy.findings?.[0]?.note).toMatch(/HTTP 500/);
  });

  it("a slow service gets what is left of the call's deadline, not its own longer timeoutMs", async () => {
    const { status, body, ms } = await call('wh.slow');
    expect(status).toBe(502);
    expect(body.error?.details[0]?.['reason']).toMatch(/no answer within \d+ ms/);
    expect(ms).toBeLessThan(1500); // the tool's timeoutMs is 500; the service answers after 3 s
  });

  it('`webhook: off` on a tool turns the default webhook off', async () => {
    const { status, body } = await call('wh.off');
    expect(status).toBe(200);
    expect(body.result.content[0]?.text).toContain('[REDACTED:secret]');
  });
});
