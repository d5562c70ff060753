import { beforeEach, describe, expect, it } from 'vitest';
import { classifyInboundRequest } from '@modelcontextprotocol/server';
import { forgetEnvelopes, modernCallAccepted } from '../../src/mcp-server/modern-envelope.js';

// The 2026-07-28 fast path's envelope memo against the SDK's own classifier, on hostile messages.
const PV = 'io.modelcontextprotocol/protocolVersion';
const CI = 'io.modelcontextprotocol/clientInfo';
const CC = 'io.modelcontextprotocol/clientCapabilities';
const LL = 'io.modelcontextprotocol/logLevel';
const RT = 'io.modelcontextprotocol/related-task';
const NAME = 'everything.echo';

type Msg = Record<string, unknown>;
const goodMeta = (): Msg => ({ [PV]: '2026-07-28', [CI]: { name: 'c', version: '1' }, [CC]: { elicitation: { form: {} } } });
const good = (meta: Msg = goodMeta()): Msg => ({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: NAME, arguments: { message: 'hi' }, _meta: meta } });

/** The SDK's verdict: a Modern request of revision 2026-07-28. */
function sdk(msg: unknown): boolean {
  const route = classifyInboundRequest({ httpMethod: 'POST', body: msg, protocolVersionHeader: '2026-07-28', mcpMethodHeader: 'tools/call', mcpNameHeader: NAME });
  return route.kind === 'modern' && route.classification.revision === '2026-07-28';
}

/** Every message goes through JSON, as a request body does. */
const wire = (m: unknown): Msg => JSON.parse(JSON.stringify(m)) as Msg;
const withMeta = (patch: Msg, drop: string[] = []): Msg => {
  const meta: Msg = { ...goodMeta(), ...patch };
  for (const k of drop) delete meta[k];
  return good(meta);
};
const withMsg = (patch: Msg, drop: string[] = []): Msg => {
  const m: Msg = { ...good(), ...patch };
  for (const k of drop) delete m[k];
  return m;
};
const withParams = (patch: Msg): Msg => {
  const m = good();
  return { ...m, params: { ...(m['params'] as Msg), ...patch } };
};

const hostile: [string, Msg][] = [
  ['the plain call', good()],
  // message level: strict JSON-RPC request schema
  ['an extra key', withMsg({ extra: 1 })],
  ['a result key', withMsg({ result: {} })],
  ['an error key', withMsg({ error: { code: 1, message: 'x' } })],
  ['no jsonrpc', withMsg({}, ['jsonrpc'])],
  ['jsonrpc 1.0', withMsg({ jsonrpc: '1.0' })],
  ['id 1.5', withMsg({ id: 1.5 })],
  ['id 2^53', withMsg({ id: 2 ** 53 })],
  ['id -1', withMsg({ id: -1 })],
  ['id ""', withMsg({ id: '' })],
  ['id null', withMsg({ id: null })],
  ['id true', withMsg({ id: true })],
  ['id []', withMsg({ id: [] })],
  ['no id (a notification)', withMsg({}, ['id'])],
  ['method initialize', withMsg({ method: 'initialize' })],
  ['params null', withMsg({ params: null })],
  ['params an array', withMsg({ params: [] })],
  ['params a string', withMsg({ params: 'x' })],
  ['no params', withMsg({}, ['params'])],
  ['an unknown params key', withParams({ other: { deep: [1, 2] } })],
  ['_meta null', withParams({ _meta: null })],
  ['_meta an array', withParams({ _meta: [] })],
  ['_meta a string', withParams({ _meta: 'x' })],
  // the request _meta schema types progressToken and related-task
  ['progressToken 1', withMeta({ progressToken: 1 })],
  ['progressToken 1.5', withMeta({ progressToken: 1.5 })],
  ['progressToken null', withMeta({ progressToken: null })],
  ['related-task ok', withMeta({ [RT]: { taskId: 't' } })],
  ['related-task bad', withMeta({ [RT]: { taskId: 1 } })],
  ['related-task a string', withMeta({ [RT]: 'x' })],
  // the envelope claim
  ['no version claim', withMeta({}, [PV])],
  ['version 2025-11-25', withMeta({ [PV]: '2025-11-25' })],
  ['version 2099-01-01', withMeta({ [PV]: '2099-01-01' })],
  ['version with a space', withMeta({ [PV]: '2026-07-28 ' })],
  ['version a number', withMeta({ [PV]: 20260728 })],
  ['version null', withMeta({ [PV]: null })],
  // clientCapabilities (required)
  ['no capabilities', withMeta({}, [CC])],
  ['capabilities null', withMeta({ [CC]: null })],
  ['capabilities an array', withMeta({ [CC]: [] })],
  ['capabilities a string', withMeta({ [CC]: 'all' })],
  ['capabilities {}', withMeta({ [CC]: {} })],
  ['elicitation a string', withMeta({ [CC]: { elicitation: 'yes' } })],
  ['elicitation form null', withMeta({ [CC]: { elicitation: { form: null } } })],
  ['elicitation url', withMeta({ [CC]: { elicitation: { url: {} } } })],
  ['sampling 1', withMeta({ [CC]: { sampling: 1 } })],
  ['roots listChanged "yes"', withMeta({ [CC]: { roots: { listChanged: 'yes' } } })],
  ['roots listChanged true', withMeta({ [CC]: { roots: { listChanged: true } } })],
  ['experimental', withMeta({ [CC]: { experimental: { a: { b: 1 } } } })],
  ['experimental a number', withMeta({ [CC]: { experimental: 1 } })],
  ['extensions a number', withMeta({ [CC]: { extensions: 1 } })],
  ['an unknown capability', withMeta({ [CC]: { telepathy: true } })],
  ['a __proto__ capability', JSON.parse(JSON.stringify(good()).replace('"elicitation"', '"__proto__":{"x":1},"elicitation"')) as Msg],
  // clientInfo (optional)
  ['no clientInfo', withMeta({}, [CI])],
  ['clientInfo null', withMeta({ [CI]: null })],
  ['clientInfo name a number', withMeta({ [CI]: { name: 1, version: '1' } })],
  ['clientInfo without version', withMeta({ [CI]: { name: 'c' } })],
  ['clientInfo with extras', withMeta({ [CI]: { name: 'c', version: '1', title: 'C', websiteUrl: 'not a url' } })],
  // logLevel (optional)
  ['logLevel debug', withMeta({ [LL]: 'debug' })],
  ['logLevel bogus', withMeta({ [LL]: 'bogus' })],
  ['logLevel null', withMeta({ [LL]: null })],
  // foreign keys pass through the loose envelope
  ['a foreign reserved key', withMeta({ 'io.modelcontextprotocol/other': { any: 1 } })],
  ['traceparent', withMeta({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' })],
  ['a __proto__ key in _meta', JSON.parse(JSON.stringify(good()).replace('"_meta":{', '"_meta":{"__proto__":{"polluted":true},')) as Msg],
  ['a __proto__ key in the message', JSON.parse(JSON.stringify(good()).replace('{"jsonrpc"', '{"__proto__":{"x":1},"jsonrpc"')) as Msg],
];

/** A clean call carrying the same clientInfo, clientCapabilities and logLevel as `m`, when `m` has a _meta object. */
function primerFor(m: Msg): Msg | undefined {
  const params = m['params'];
  const meta = params !== null && typeof params === 'object' && !Array.isArray(params) ? (params as Msg)['_meta'] : undefined;
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) return undefined;
  const copy: Msg = { [PV]: '2026-07-28' };
  for (const k of [CI, CC, LL]) if (k in (meta as Msg)) copy[k] = (meta as Msg)[k];
  return wire(good(copy));
}

describe('the 2026-07-28 fast path judges a call\'s envelope as the SDK\'s classifier does', () => {
  beforeEach(() => forgetEnvelopes());

  it('on every hostile message, with nothing remembered', () => {
    for (const [label, m] of hostile) expect(modernCallAccepted(wire(m), NAME), label).toBe(sdk(wire(m)));
  });

  it('on every hostile message after a clean call with the same envelope was accepted and remembered', () => {
    for (const [label, m] of hostile) {
      forgetEnvelopes();
      const primer = primerFor(m);
      if (primer) expect(modernCallAccepted(primer, NAME), `primer of ${label}`).toBe(sdk(primer));
      expect(modernCallAccepted(wire(m), NAME), label).toBe(sdk(wire(m)));
      // and again, now that the message itself may have been remembered
      expect(modernCallAccepted(wire(m), NAME), `${label}, twice`).toBe(sdk(wire(m)));
    }
  });

  it('after every hostile message was seen, in any order: a remembered envelope never vouches for a message the SDK refuses', () => {
    for (const [, m] of hostile) modernCallAccepted(wire(m), NAME);
    for (const [label, m] of [...hostile].reverse()) expect(modernCallAccepted(wire(m), NAME), label).toBe(sdk(wire(m)));
  });

  it('an envelope too large to remember, and a flood of distinct ones, are still judged right', () => {
    const big = withMeta({ [CC]: { experimental: { blob: { data: 'x'.repeat(10_000) } } } });
    expect(sdk(wire(big))).toBe(true);
    expect(modernCallAccepted(wire(big), NAME)).toBe(true);
    expect(modernCallAccepted(wire({ ...big, extra: 1 }), NAME)).toBe(false);
    for (let i = 0; i < 600; i++) expect(modernCallAccepted(wire(withMeta({ [CI]: { name: `c${i}`, version: '1' } })), NAME)).toBe(true);
    expect(modernCallAccepted(wire(withMeta({ [CI]: { name: 'c599', version: '1' }, [CC]: null })), NAME)).toBe(false);
  });
});
