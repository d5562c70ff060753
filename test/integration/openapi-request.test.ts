import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { HttpAdapter } from '../../src/adapters/http.js';
import { loadConfig } from '../../src/config/load.js';
import { GatewayError } from '../../src/errors.js';
import { compileOperation } from '../../src/tools/openapi/compile-operation.js';
import { readDocument } from '../../src/tools/openapi/document.js';
import type { OpenApiFile } from '../../src/tools/openapi/file-schema.js';
import { operationDefs } from '../../src/tools/openapi/operations.js';
import type { CompiledTool } from '../../src/tools/types.js';
import { createAjv } from '../../src/util/ajv.js';
import { Cancel } from '../../src/util/cancel.js';
import { TokenEndpoint } from '../helpers/token-endpoint.js';
import { Upstream, json } from '../helpers/upstream.js';

/** OpenAPI operations called through the HTTP adapter against a real upstream: the exact request it receives. */

const defaults = loadConfig({ file: 'config/gateway.yaml', env: {} }).config.defaults;
const ajv = createAjv();
const str = { type: 'string' };
const ok = { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } };

let up: Upstream;
let idp: TokenEndpoint;
let adapter: HttpAdapter;

beforeAll(async () => {
  up = await new Upstream().start();
  up.on((req, res) => {
    if (req.url?.includes('deny')) return json(res, 401, { error: `bad key ${String(req.headers['x-api-key'])}` });
    if (req.url?.includes('echo')) return json(res, 200, { youSent: String(req.headers['x-api-key']) });
    return json(res, 200, { ok: true });
  });
  idp = await new TokenEndpoint({ 'client-1': 'cc-secret-value' }).start();
  adapter = new HttpAdapter();
});
afterAll(async () => {
  await adapter.close();
  await up.close();
  await idp.close();
});
beforeEach(() => {
  up.seen.length = 0;
});

async function toolsOf(doc: Record<string, unknown>, spec: Partial<OpenApiFile> = {}): Promise<Record<string, CompiledTool>> {
  const r = await readDocument(stringify({ openapi: '3.1.0', info: { title: 't', version: '1' }, ...doc }), { file: 'api.yaml' });
  if ('problems' in r) throw new Error(JSON.stringify(r.problems));
  const file = { kind: 'openapi', name: 'api', spec: './api.yaml', baseUrl: `${up.url}/v1`, ...spec } as OpenApiFile;
  const defs = operationDefs(file, r.doc, r.lineOf, { file: 'api.yaml', refs: r.refs });
  expect(defs.problems).toEqual([]);
  const out: Record<string, CompiledTool> = {};
  for (const d of defs.ops) {
    const t = compileOperation(d, { file: 'tools.d/api.yaml', fileHash: 'h', defaults, ajv, lineOf: () => undefined });
    if (Array.isArray(t)) throw new Error(JSON.stringify(t));
    out[d.operationId ?? d.name] = t;
  }
  return out;
}

async function call(tool: CompiledTool, args: Record<string, unknown>, secrets?: ReadonlySet<string>) {
  expect(tool.validateArgs(args), JSON.stringify(tool.validateArgs.errors)).toBe(true);
  return adapter.call({ tool, backend: tool.backends[0]!, args, cancel: new Cancel(), deadline: Date.now() + 5000, requestId: 'req-1', secrets });
}

async function refusal(p: Promise<unknown>): Promise<GatewayError> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(GatewayError);
  return e as GatewayError;
}

describe('OpenAPI requests: path parameters', () => {
  let tools: Record<string, CompiledTool>;
  beforeAll(async () => {
    tools = await toolsOf({
      paths: {
        '/files/{name}/meta': { get: { operationId: 'meta', parameters: [{ name: 'name', in: 'path', required: true, schema: str }], responses: ok } },
        '/label/{ids}': { get: { operationId: 'label', parameters: [{ name: 'ids', in: 'path', required: true, style: 'label', explode: true, schema: { type: 'array', items: str } }], responses: ok } },
        '/matrix/{pt}': { get: { operationId: 'matrix', parameters: [{ name: 'pt', in: 'path', required: true, style: 'matrix', explode: false, schema: { type: 'object' } }], responses: ok } },
        '/my files/{name}/é': { get: { operationId: 'spaced', parameters: [{ name: 'name', in: 'path', required: true, schema: str }], responses: ok } },
        '/simple/{ids}': { delete: { operationId: 'simple', parameters: [{ name: 'ids', in: 'path', required: true, schema: { type: 'array', items: { type: 'integer' } } }], responses: ok } },
      },
    });
  });

  it.each([
    ['../admin', '/v1/files/..%2Fadmin/meta'],
    ['a/b', '/v1/files/a%2Fb/meta'],
    ['x?y=1', '/v1/files/x%3Fy%3D1/meta'],
    ['x#frag', '/v1/files/x%23frag/meta'],
    ['%2e%2e', '/v1/files/%252e%252e/meta'],
    ['a%2Fb', '/v1/files/a%252Fb/meta'],
    ['a b;c,d', '/v1/files/a%20b%3Bc%2Cd/meta'],
    ['é', '/v1/files/%C3%A9/meta'],
    ['http://evil.example/x', '/v1/files/http%3A%2F%2Fevil.example%2Fx/meta'],
  ])('a hostile value %j stays one encoded segment: %s', async (name, sent) => {
    await call(tools['meta']!, { name });
    expect(up.seen.map((s) => [s.method, s.url, s.headers.host])).toEqual([['GET', sent, up.url.slice('http://'.length)]]);
  });

  it.each(['..', '.', ''])('a value that would be the segment %j is refused before anything is sent', async (name) => {
    const e = await refusal(call(tools['meta']!, { name }));
    expect(e.code).toBe('INVALID_ARGUMENTS');
    expect(up.seen).toEqual([]);
  });

  it("the template's own text is sent encoded (a space, non-ASCII), not refused", async () => {
    await call(tools['spaced']!, { name: 'a b' });
    expect(up.seen.map((s) => s.url)).toEqual(['/v1/my%20files/a%20b/%C3%A9']);
  });

  it('label (explode), matrix (object, no explode) and simple (array) styles', async () => {
    await call(tools['label']!, { ids: ['a', 'b/c'] });
    await call(tools['matrix']!, { pt: { x: 1, y: 'two words' } });
    await call(tools['simple']!, { ids: [3, 4, 5] });
    expect(up.seen.map((s) => [s.method, s.url])).toEqual([
      ['GET', '/v1/label/.a.b%2Fc'],
      ['GET', '/v1/matrix/;pt=x,1,y,two%20words'],
      ['DELETE', '/v1/simple/3,4,5'],
    ]);
  });
});

describe('OpenAPI requests: query, headers and bodies', () => {
  let tools: Record<string, CompiledTool>;
  beforeAll(async () => {
    tools = await toolsOf({
      paths: {
        '/search': {
          get: {
            operationId: 'search',
            parameters: [
              { name: 'tags', in: 'query', schema: { type: 'array', items: str } },
              { name: 'ids', in: 'query', explode: false, schema: { type: 'array', items: { type: 'integer' } } },
              { name: 'sp', in: 'query', style: 'spaceDelimited', explode: false, schema: { type: 'array', items: str } },
              { name: 'pipe', in: 'query', style: 'pipeDelimited', explode: false, schema: { type: 'array', items: str } },
              { name: 'filter', in: 'query', style: 'deepObject', explode: true, schema: { type: 'object' } },
              { name: 'point', in: 'query', schema: { type: 'object' } },
              { name: 'q', in: 'query', schema: str },
              { name: 'r', in: 'query', allowReserved: true, schema: str },
              { name: 'X-Trace', in: 'header', schema: str },
              { name: 'X-List', in: 'header', schema: { type: 'array', items: str } },
            ],
            responses: ok,
          },
        },
        '/forms': {
          post: {
            operationId: 'form',
            requestBody: {
              required: true,
              content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', properties: { name: str, tags: { type: 'array', items: str }, n: { type: 'integer' } } }, encoding: { tags: { style: 'pipeDelimited', explode: false } } } },
            },
            responses: ok,
          },
        },
        '/docs/{id}': {
          patch: {
            operationId: 'patch',
            parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
            requestBody: { required: true, content: { 'application/merge-patch+json': { schema: { type: 'object' } } } },
            responses: ok,
          },
        },
      },
    });
  });

  it('each query style as the document says; hostile values stay inside their value', async () => {
    await call(tools['search']!, {
      tags: ['a', 'b c'],
      ids: [1, 2],
      sp: ['x', 'y'],
      pipe: ['p', 'q'],
      filter: { color: 'red', size: 'L' },
      point: { lat: 1.5, lng: -2 },
      q: 'a&admin=true#x',
      r: 'a/b:c&d=e',
    });
    const url = up.seen[0]!.url;
    expect(url).toBe('/v1/search?tags=a&tags=b%20c&ids=1,2&sp=x%20y&pipe=p|q&filter%5Bcolor%5D=red&filter%5Bsize%5D=L&lat=1.5&lng=-2&q=a%26admin%3Dtrue%23x&r=a/b:c%26d%3De');
    const params = new URL(url, 'http://x').searchParams;
    expect(params.get('q')).toBe('a&admin=true#x');
    expect(params.get('admin')).toBeNull();
    expect(params.get('r')).toBe('a/b:c&d=e');
    expect(up.seen[0]!.headers['accept']).toBe('application/json');
  });

  it('header parameters are sent; a line break in one is refused and nothing is sent', async () => {
    await call(tools['search']!, { 'X-Trace': 'abc-123', 'X-List': ['a', 'b'] });
    expect(up.seen[0]!.headers).toMatchObject({ 'x-trace': 'abc-123', 'x-list': 'a,b', 'x-request-id': 'req-1' });
    const e = await refusal(call(tools['search']!, { 'X-Trace': 'a\r\nX-Evil: 1' }));
    expect(e.code).toBe('INVALID_ARGUMENTS');
    expect(up.seen).toHaveLength(1);
  });

  it('an application/x-www-form-urlencoded body, with a field encoding', async () => {
    await call(tools['form']!, { body: { name: 'a b&c=d', tags: ['x', 'y'], n: 3 } });
    const seen = up.seen[0]!;
    expect(seen.method).toBe('POST');
    expect(seen.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(seen.body).toBe('name=a%20b%26c%3Dd&tags=x|y&n=3');
    expect(Object.fromEntries(new URLSearchParams(seen.body))).toEqual({ name: 'a b&c=d', tags: 'x|y', n: '3' });
  });

  it('a JSON body under its own media type', async () => {
    await call(tools['patch']!, { id: 7, body: { title: 'new "title"', tags: null } });
    expect(up.seen.map((s) => [s.method, s.url, s.headers['content-type'], s.body])).toEqual([['PATCH', '/v1/docs/7', 'application/merge-patch+json', '{"title":"new \\"title\\"","tags":null}']]);
  });
});

describe('OpenAPI requests: security schemes', () => {
  const KEY = 'key-abcdef-123456';
  let tools: Record<string, CompiledTool>;
  beforeAll(async () => {
    const op = (operationId: string, security: unknown) => ({ get: { operationId, security, responses: ok } });
    tools = await toolsOf(
      {
        paths: {
          '/h': op('header', [{ hkey: [] }]),
          '/q': op('query', [{ qkey: [] }]),
          '/c': op('cookie', [{ ckey: [] }]),
          '/b': op('bearer', [{ bearer: [] }]),
          '/basic': op('basic', [{ basic: [] }]),
          '/o1': op('oauthA', [{ oauth: ['pets:read'] }]),
          '/o2': op('oauthB', [{ oauth: ['pets:read'] }]),
          '/both': op('both', [{ hkey: [], qkey: [] }]),
          '/deny': op('deny', [{ hkey: [] }]),
          '/echo': op('echo', [{ hkey: [] }]),
        },
        components: {
          securitySchemes: {
            hkey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
            qkey: { type: 'apiKey', in: 'query', name: 'api_key' },
            ckey: { type: 'apiKey', in: 'cookie', name: 'sid' },
            bearer: { type: 'http', scheme: 'bearer' },
            basic: { type: 'http', scheme: 'basic' },
            oauth: { type: 'oauth2', flows: { clientCredentials: { tokenUrl: idp.tokenUrl, scopes: { 'pets:read': 'read' } } } },
          },
        },
      },
      { auth: { hkey: KEY, qkey: KEY, ckey: KEY, bearer: 'bearer-token-xyz', basic: 'alice:pa ss:word', oauth: 'client-1:cc-secret-value' } },
    );
  });

  it('apiKey in a header, the query and a cookie; both of one requirement together', async () => {
    await call(tools['header']!, {});
    await call(tools['query']!, {});
    await call(tools['cookie']!, {});
    await call(tools['both']!, {});
    expect(up.seen[0]!.headers['x-api-key']).toBe(KEY);
    expect(up.seen[1]!.url).toBe(`/v1/q?api_key=${KEY}`);
    expect(up.seen[2]!.headers['cookie']).toBe(`sid=${KEY}`);
    expect([up.seen[3]!.url, up.seen[3]!.headers['x-api-key']]).toEqual([`/v1/both?api_key=${KEY}`, KEY]);
  });

  it('HTTP bearer and basic', async () => {
    await call(tools['bearer']!, {});
    await call(tools['basic']!, {});
    expect(up.seen[0]!.headers['authorization']).toBe('Bearer bearer-token-xyz');
    expect(up.seen[1]!.headers['authorization']).toBe(`Basic ${Buffer.from('alice:pa ss:word').toString('base64')}`);
  });

  it('OAuth2 client credentials: a token from the flow\'s tokenUrl with the scopes, shared by the operations that need the same', async () => {
    const before = idp.requests.length;
    await call(tools['oauthA']!, {});
    await call(tools['oauthB']!, {});
    const fetched = idp.requests.slice(before);
    expect(fetched).toHaveLength(1);
    expect(fetched[0]!.form).toEqual({ grant_type: 'client_credentials', scope: 'pets:read' });
    expect(fetched[0]!.authorization).toBe(`Basic ${Buffer.from('client-1:cc-secret-value').toString('base64')}`);
    const token = idp.issued[idp.issued.length - 1]!;
    expect(up.seen.map((s) => s.headers['authorization'])).toEqual([`Bearer ${token}`, `Bearer ${token}`]);
    expect(await idp.verify(token, 'default')).toMatchObject({ client_id: 'client-1', scope: 'pets:read' });
  });

  it('a secret the upstream echoes in a 200 never reaches the result, even when the gateway set does not hold it', async () => {
    const payload = await call(tools['echo']!, {}, new Set());
    expect(payload).toEqual({ kind: 'json', data: { youSent: '[REDACTED]' } });
  });

  it('a secret the upstream echoes in an error is masked, even when the gateway set does not hold it', async () => {
    const e = await refusal(call(tools['deny']!, {}, new Set()));
    expect(e.code).toBe('UPSTREAM_ERROR');
    const text = JSON.stringify(e.details);
    expect(text).not.toContain(KEY);
    expect(text).toContain('[REDACTED]');
  });
});
