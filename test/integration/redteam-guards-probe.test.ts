import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/app.js';

const RAW = fileURLToPath(new URL('../fixtures/mcp/result-guard-server.mjs', import.meta.url));
const K = 'AKIAQ3EGRTZ5LWXN4PKD';
describe('probe', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ tools: { 'raw.yaml': { kind: 'mcp-server', name: 'raw', transport: 'stdio', command: process.execPath, args: [RAW], prestart: true, resultGuards: [{ pii: ['card','email'], action: 'redact' }] } } });
  });
  afterAll(async () => { await gw?.close(); });
  const cases: Record<string, unknown> = {
    resource: { content: [{ type: 'resource', resource: { uri: 'x://a', text: `k ${K}` } }] },
    resourceUri: { content: [{ type: 'resource', resource: { uri: `x://a/${K}`, text: 'k' } }] },
    meta: { content: [{ type: 'text', text: 'ok' }], _meta: { note: `k ${K}` } },
    blockmeta: { content: [{ type: 'text', text: 'ok', _meta: { note: `k ${K}` } }] },
    mimeType: { content: [{ type: 'text', text: 'ok', mimeType: `k ${K}` }] },
    imgMime: { content: [{ type: 'image', data: 'aGk=', mimeType: `image/png ${K}` }] },
    dataInText: { content: [{ type: 'text', text: 'ok', data: `k ${K}` }] },
    split: { content: [{ type: 'text', text: 'AKIAQ3EGRT' }, { type: 'text', text: 'Z5LWXN4PKD' }] },
    splitSC: { content: [{ type: 'text', text: 'AKIAQ3EGRT' }], structuredContent: { a: 'Z5LWXN4PKD' } },
    keyInSC: { content: [{ type: 'text', text: 'ok' }], structuredContent: { [`k${K}`]: 1, ['a\u200Bb\u{E0041}']: 2 } },
    cardKey: { content: [{ type: 'text', text: 'ok' }], structuredContent: { '4111111111111111': 1 } },
    resLink: { content: [{ type: 'resource_link', uri: `http://x/${K}`, name: `n ${K}`, description: `d ${K}` }] },
    nul: { content: [{ type: 'text', text: `a\u0000${K}\u0000` }] },
    lone: { content: [{ type: 'text', text: `\uD800${K}\uDFFF` }] },
    bigNum: { content: [{ type: 'text', text: 'x' }], structuredContent: { n: 1e308, m: 123456789012345678901234567890 } },
    cardNum: { content: [{ type: 'text', text: 'x' }], structuredContent: { n: 4111111111111111 } },
    typeField: { content: [{ type: `text ${K}`, text: 'x' }] },
    fullwidth: { content: [{ type: 'text', text: 'ＡＫＩＡＱ３ＥＧＲＴＺ５ＬＷＸＮ４ＰＫＤ' }] },
    softhyphen: { content: [{ type: 'text', text: 'AKIAQ3EG\u00ADRTZ5LWXN4PKD' }] },
    wj: { content: [{ type: 'text', text: 'AKIAQ3EG\u2060RTZ5LWXN4PKD' }] },
    mvs: { content: [{ type: 'text', text: 'AKIAQ3EG\u180ERTZ5LWXN4PKD' }] },
    cgj: { content: [{ type: 'text', text: 'AKIAQ3EG\u034FRTZ5LWXN4PKD' }] },
    hangul: { content: [{ type: 'text', text: 'AKIAQ3EG\u3164RTZ5LWXN4PKD' }] },
    lrm: { content: [{ type: 'text', text: 'AKIAQ3EG\u200ERTZ5LWXN4PKD' }] },
    alm: { content: [{ type: 'text', text: 'AKIAQ3EG\u061CRTZ5LWXN4PKD' }] },
    cardZW: { content: [{ type: 'text', text: '4111\u200E1111\u200E1111\u200E1111' }] },
    cardDots: { content: [{ type: 'text', text: '4111.1111.1111.1111' }] },
    cardNbsp: { content: [{ type: 'text', text: '4111\u00A01111\u00A01111\u00A01111' }] },
    emailFull: { content: [{ type: 'text', text: 'alice＠example.org' }] },
  };
  it('cases', async () => {
    for (const [name, result] of Object.entries(cases)) {
      const r = await gw.call('raw.raw', { result });
      const leak = r.body.includes(K) || r.body.includes('Z5LWXN4PKD') || r.body.includes('4111');
      console.log(leak ? 'LEAK' : 'ok  ', name, r.statusCode, r.body.replace(/"callId".*?"result":/, '').slice(0, 300));
    }
  });
});
