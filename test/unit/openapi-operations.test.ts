import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadConfig } from '../../src/config/load.js';
import { readDocument, type ReadDocument } from '../../src/tools/openapi/document.js';
import { operationDefs, type OperationDefs } from '../../src/tools/openapi/operations.js';
import { compileOperation } from '../../src/tools/openapi/compile-operation.js';
import type { OpenApiFile } from '../../src/tools/openapi/file-schema.js';
import { createAjv } from '../../src/util/ajv.js';

const defaults = loadConfig({ file: 'config/gateway.yaml', env: {} }).config.defaults;
const DOC = 'specs/api.yaml';

async function read(doc: unknown, asJson = false): Promise<ReadDocument> {
  const r = await readDocument(asJson ? JSON.stringify(doc, null, 2) : stringify(doc), { file: DOC });
  if ('problems' in r) throw new Error(JSON.stringify(r.problems));
  return r;
}

async function defsOf(doc: unknown, spec: Partial<OpenApiFile> = {}): Promise<OperationDefs> {
  const r = await read(doc);
  const file = { kind: 'openapi', name: 'pets', spec: './api.yaml', baseUrl: 'http://127.0.0.1:9/v1', ...spec } as OpenApiFile;
  return operationDefs(file, r.doc, r.lineOf, { file: DOC, refs: r.refs });
}

const str = { type: 'string' };
const ok = { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object', properties: { id: { type: 'integer' } } } } } } };
const oa30 = (paths: unknown, extra: Record<string, unknown> = {}) => ({ openapi: '3.0.3', info: { title: 't', version: '1' }, paths, ...extra });
const oa31 = (paths: unknown, extra: Record<string, unknown> = {}) => ({ openapi: '3.1.0', info: { title: 't', version: '1' }, paths, ...extra });

describe('OpenAPI operations as tool definitions', () => {
  it('3.0: names, description, parameters at the top level, body under body, required, enums, examples and formats kept', async () => {
    const { ops, problems } = await defsOf(
      oa30({
        '/pets/{petId}': {
          parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' }, example: '0b6c' }],
          put: {
            operationId: 'updatePet',
            summary: 'Update a pet',
            description: 'Replaces the pet.',
            tags: ['pets'],
            parameters: [
              { name: 'dryRun', in: 'query', schema: { type: 'boolean' } },
              { name: 'X-Trace', in: 'header', description: 'a trace id', schema: { type: 'string' } },
            ],
            requestBody: {
              required: true,
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } },
            },
            responses: ok,
          },
        },
      }, { components: { schemas: { Pet: { type: 'object', required: ['name', 'id'], properties: { id: { type: 'integer', readOnly: true }, name: { type: 'string', nullable: true }, kind: { type: 'string', enum: ['cat', 'dog'], example: 'cat' } } } } } }),
    );
    expect(problems).toEqual([]);
    expect(ops).toHaveLength(1);
    const op = ops[0]!;
    expect(op.name).toBe('pets.update_pet');
    expect(op.pointer).toBe('/paths/~1pets~1{petId}/put');
    expect(op.file.description).toBe('Update a pet\n\nReplaces the pet.');
    expect(op.file.sideEffect).toBe('write');
    expect(op.file.idempotent).toBe(true);
    expect(op.file.tags).toEqual(['pets']);
    expect(op.file.inputSchema).toEqual({
      type: 'object',
      additionalProperties: false,
      required: ['petId', 'body'],
      properties: {
        petId: { type: 'string', format: 'uuid', examples: ['0b6c'] },
        dryRun: { type: 'boolean' },
        'X-Trace': { type: 'string', description: 'a trace id' },
        body: {
          type: 'object',
          // readOnly id is not sent (and no longer required); nullable became a type list (3.0 → 3.1)
          required: ['name'],
          properties: { name: { type: ['string', 'null'] }, kind: { type: 'string', enum: ['cat', 'dog'], examples: ['cat'] } },
        },
      },
    });
    expect(op.file.outputSchema).toEqual({ type: 'object', properties: { id: { type: 'integer' } } });
    expect(op.plan).toMatchObject({ method: 'PUT', origin: 'http://127.0.0.1:9', basePath: '/v1', path: '/pets/{petId}', accept: 'application/json', body: { mediaType: 'application/json', required: true } });
    expect(op.plan.params.map((p) => [p.name, p.in, p.style, p.explode])).toEqual([
      ['petId', 'path', 'simple', false],
      ['dryRun', 'query', 'form', true],
      ['X-Trace', 'header', 'simple', false],
    ]);
  });

  it('side effects from the method, x-toolgate-side-effect and overrides; deprecated marked in the description; names without operationId', async () => {
    const { ops, problems } = await defsOf(
      oa31({
        '/pets': {
          get: { responses: ok },
          post: { operationId: 'searchPets', 'x-toolgate-side-effect': 'read', responses: ok },
          patch: { operationId: 'patchPets', responses: ok },
          options: { operationId: 'optionsPets', responses: ok },
        },
        '/pets/{petId}/toys': { parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string' } }], delete: { deprecated: true, summary: 'Remove toys', responses: { '204': { description: 'gone' } } } },
      }),
      { overrides: { patchPets: { sideEffect: 'destructive', description: 'Patches pets (operator text).' } } },
    );
    expect(problems).toEqual([]);
    const by = Object.fromEntries(ops.map((o) => [o.name, o]));
    expect(Object.keys(by)).toEqual(['pets.get_pets', 'pets.search_pets', 'pets.patch_pets', 'pets.options_pets', 'pets.delete_pets_pet_id_toys']);
    expect(by['pets.get_pets']!.file).toMatchObject({ sideEffect: 'read', idempotent: true, description: 'GET /pets' });
    expect(by['pets.search_pets']!.file.sideEffect).toBe('read');
    expect(by['pets.search_pets']!.file.idempotent).toBeUndefined();
    expect(by['pets.patch_pets']!.file).toMatchObject({ sideEffect: 'destructive', description: 'Patches pets (operator text).' });
    expect(by['pets.patch_pets']!.overrideKey).toBe('patchPets');
    const del = by['pets.delete_pets_pet_id_toys']!;
    expect(del.file).toMatchObject({ sideEffect: 'destructive', description: '[Deprecated operation] Remove toys' });
    expect(del.file.outputSchema).toBeUndefined(); // a 204 has no JSON body to check

    const ajv = createAjv();
    const compiled = ops.map((o) => compileOperation(o, { file: 'tools.d/pets.yaml', fileHash: 'h', defaults, ajv, lineOf: () => undefined }));
    const tools = Object.fromEntries(compiled.map((c) => (Array.isArray(c) ? ['x', c] : [c.name, c])));
    expect(tools['pets.delete_pets_pet_id_toys']).toMatchObject({ sideEffect: 'destructive', confirm: true, idempotent: false, providerName: 'pets__delete_pets_pet_id_toys' });
    expect(tools['pets.get_pets']).toMatchObject({ sideEffect: 'read', idempotent: true, confirm: false, openapi: { spec: 'pets', method: 'GET', path: '/pets' } });
    expect(tools['pets.search_pets']).toMatchObject({ sideEffect: 'read', idempotent: true });
    expect(tools['pets.patch_pets']).toMatchObject({ sideEffect: 'destructive', idempotent: false, confirm: true });
  });

  it('3.0 schema keywords become 2020-12 where they are keywords, never where they are property names', async () => {
    const schema = { type: 'object', properties: { example: { type: 'string', example: 'x' }, nullable: { type: 'integer', nullable: true, minimum: 0, exclusiveMinimum: true }, level: { type: 'string', enum: ['a'], nullable: true } } };
    const { ops } = await defsOf(oa30({ '/a': { post: { operationId: 'a', requestBody: { required: true, content: { 'application/json': { schema } } }, responses: ok } } }));
    expect((ops[0]!.file.inputSchema!['properties'] as Record<string, unknown>)['body']).toEqual({
      type: 'object',
      properties: { example: { type: 'string', examples: ['x'] }, nullable: { type: ['integer', 'null'], exclusiveMinimum: 0 }, level: { type: ['string', 'null'], enum: ['a', null] } },
    });
    const v2 = await read({ swagger: '2.0', info: { title: 't', version: '1' }, paths: { '/a': { post: { operationId: 'a', parameters: [{ name: 'b', in: 'body', required: true, schema: { $ref: '#/definitions/Props' } }], responses: { '200': { description: 'ok' } } } } }, definitions: { Props: { type: 'object', properties: { example: { $ref: '#/definitions/Json' }, default: { $ref: '#/definitions/Json' } } }, Json: { type: 'object' } } });
    const d = operationDefs({ kind: 'openapi', name: 'k', spec: 'x', baseUrl: 'http://127.0.0.1:9' } as OpenApiFile, v2.doc, v2.lineOf, { file: DOC, refs: v2.refs });
    expect(d.problems).toEqual([]);
    expect((d.ops[0]!.file.inputSchema!['properties'] as Record<string, unknown>)['body']).toEqual({ type: 'object', properties: { example: { type: 'object' }, default: { type: 'object' } } });
  });

  it('a parameter that carries the API key is the scheme\'s, not an argument; deepObject without explode means a[b]=c', async () => {
    const { ops, warnings } = await defsOf(
      oa31(
        { '/a': { get: { operationId: 'a', security: [{ q: [] }], parameters: [{ name: 'api_key', in: 'query', required: true, schema: str }, { name: 'f', in: 'query', style: 'deepObject', schema: { type: 'object' } }], responses: ok } } },
        { components: { securitySchemes: { q: { type: 'apiKey', in: 'query', name: 'api_key' } } } },
      ),
      { auth: { q: 'k-123456' } },
    );
    expect(ops[0]!.file.inputSchema).toEqual({ type: 'object', additionalProperties: false, properties: { f: { type: 'object' } } });
    expect(ops[0]!.plan.params).toEqual([{ name: 'f', in: 'query', style: 'deepObject', explode: true, allowReserved: false, required: false }]);
    expect(warnings.map((w) => w.message)).toEqual(["query parameter 'api_key' is set by the security scheme: not an argument"]);
  });

  it('include and exclude: globs on operationId, tag and "METHOD /path"', async () => {
    const paths = {
      '/pets': { get: { operationId: 'listPets', tags: ['read'], responses: ok }, post: { operationId: 'createPet', responses: ok } },
      '/pets/{id}': { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], delete: { operationId: 'deletePet', responses: ok } },
    };
    const names = async (spec: Partial<OpenApiFile>) => (await defsOf(oa31(paths), spec)).ops.map((o) => o.operationId);
    expect(await names({ include: ['list*'] })).toEqual(['listPets']);
    expect(await names({ include: ['read'] })).toEqual(['listPets']);
    expect(await names({ exclude: ['DELETE *'] })).toEqual(['listPets', 'createPet']);
    expect(await names({ include: ['* /pets'], exclude: ['createPet'] })).toEqual(['listPets']);
  });

  it('Swagger 2.0 is converted: body and formData parameters, collectionFormat, definitions, host and basePath', async () => {
    const r = await read({
      swagger: '2.0',
      info: { title: 't', version: '1' },
      host: '127.0.0.1:9',
      basePath: '/api',
      schemes: ['http'],
      paths: {
        '/pets': {
          get: { operationId: 'findPets', produces: ['application/json'], parameters: [{ name: 'tags', in: 'query', type: 'array', items: { type: 'string' }, collectionFormat: 'pipes' }], responses: { '200': { description: 'ok', schema: { $ref: '#/definitions/Pet' } } } },
          post: { operationId: 'addPet', consumes: ['application/json'], parameters: [{ name: 'pet', in: 'body', required: true, schema: { $ref: '#/definitions/Pet' } }], responses: { '200': { description: 'ok' } } },
          put: { operationId: 'formPet', consumes: ['application/x-www-form-urlencoded'], parameters: [{ name: 'name', in: 'formData', type: 'string', required: true }], responses: { '200': { description: 'ok' } } },
        },
      },
      definitions: { Pet: { type: 'object', properties: { name: { type: 'string' } } } },
    });
    expect(r.version).toBe('2.0');
    const { ops, problems } = operationDefs({ kind: 'openapi', name: 'v2', spec: './x.yaml' } as OpenApiFile, r.doc, r.lineOf, { file: DOC, refs: r.refs });
    expect(problems).toEqual([]);
    const [find, add, form] = ops;
    expect(find!.plan).toMatchObject({ origin: 'http://127.0.0.1:9', basePath: '/api', params: [{ name: 'tags', style: 'pipeDelimited', explode: false }] });
    expect(find!.file.outputSchema).toEqual({ type: 'object', properties: { name: { type: 'string' } } });
    expect(add!.file.inputSchema).toMatchObject({ required: ['body'], properties: { body: { type: 'object', properties: { name: { type: 'string' } } } } });
    expect(form!.plan.body).toMatchObject({ mediaType: 'application/x-www-form-urlencoded' });
    expect(form!.file.inputSchema).toMatchObject({ properties: { body: { type: 'object', required: ['name'] } } });
  });

  it('a circular schema is kept as $defs (not cut), and ajv validates the recursion', async () => {
    const { ops, problems } = await defsOf(
      oa31(
        { '/trees': { post: { operationId: 'plant', requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } }, responses: { '201': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } } } } } },
        { components: { schemas: { Node: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } } } } } },
      ),
    );
    expect(problems).toEqual([]);
    const input = ops[0]!.file.inputSchema!;
    expect(input['properties']).toMatchObject({ body: { $ref: '#/$defs/Node' } });
    expect(input['$defs']).toEqual({ Node: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/Node' } } } } });
    expect(ops[0]!.file.outputSchema).toMatchObject({ type: 'object', $ref: '#/$defs/Node', $defs: { Node: { type: 'object' } } });
    const validate = createAjv().compile(input);
    expect(validate({ body: { name: 'a', children: [{ name: 'b', children: [{ name: 'c' }] }] } })).toBe(true);
    expect(validate({ body: { name: 'a', children: [{ name: 'b', children: [{ nom: 'c' }] }] } })).toBe(false);
  });

  it('the pin changes with what the document says, not with secrets or overrides', async () => {
    const doc = (summary: string) => oa31({ '/a': { get: { operationId: 'a', summary, security: [{ key: [] }], responses: ok } } }, { components: { securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-Key' } } } });
    const hash = async (summary: string, spec: Partial<OpenApiFile>) => (await defsOf(doc(summary), spec)).ops[0]!.hash;
    const h = await hash('one', { auth: { key: 'secret-value-1' } });
    expect(await hash('one', { auth: { key: 'secret-value-2' } })).toBe(h);
    expect(await hash('one', { auth: { key: 'secret-value-1' }, overrides: { a: { timeoutMs: 100 } } })).toBe(h);
    expect(await hash('two', { auth: { key: 'secret-value-1' } })).not.toBe(h);
    expect(await hash('one', { auth: { key: 'secret-value-1' }, baseUrl: 'http://127.0.0.2:9' })).not.toBe(h);
  });
});

describe('OpenAPI operations that cannot be tools are skipped, each with file, pointer and line', () => {
  const skipped = async (doc: unknown) => {
    const r = await defsOf(doc);
    return { names: r.ops.map((o) => o.name), problems: r.problems, warnings: r.warnings };
  };

  it('an unsupported parameter style', async () => {
    const { names, problems } = await skipped(oa31({ '/a': { get: { operationId: 'a', parameters: [{ name: 'q', in: 'query', style: 'matrix', schema: { type: 'string' } }], responses: ok } }, '/b': { get: { operationId: 'b', responses: ok } } }));
    expect(names).toEqual(['pets.b']);
    expect(problems).toEqual([{ file: DOC, line: expect.any(Number), path: '/paths/~1a/get/parameters/0/style', message: expect.stringMatching(/^GET \/a: parameter 'q': style 'matrix' is not supported in query .*: skipped$/) }]);
  });

  it('a required body that is neither JSON nor form; an optional one is left out with a note', async () => {
    const { names, problems, warnings } = await skipped(
      oa31({
        '/up': { post: { operationId: 'upload', requestBody: { required: true, content: { 'multipart/form-data': { schema: { type: 'object' } } } }, responses: ok } },
        '/opt': { post: { operationId: 'opt', requestBody: { content: { 'application/octet-stream': {} } }, responses: ok } },
      }),
    );
    expect(names).toEqual(['pets.opt']);
    expect(problems).toEqual([{ file: DOC, line: expect.any(Number), path: '/paths/~1up/post/requestBody', message: expect.stringContaining('request body type multipart/form-data is not supported') }]);
    expect(warnings).toEqual([expect.objectContaining({ path: '/paths/~1opt/post/requestBody', message: expect.stringContaining('the optional body is left out') })]);
  });

  it('duplicate operationIds, and two operations that map to one name', async () => {
    const { names, problems } = await skipped(
      oa31({
        '/a': { get: { operationId: 'getThing', responses: ok }, post: { operationId: 'getThing', responses: ok } },
        '/b': { get: { operationId: 'get_thing2', responses: ok } },
        '/c': { get: { operationId: 'getThing2', responses: ok } },
      }),
    );
    expect(names).toEqual(['pets.get_thing', 'pets.get_thing2']);
    expect(problems.map((p) => [p.path, p.message])).toEqual([
      ['/paths/~1a/post/operationId', "duplicate operationId 'getThing' (first at /paths/~1a/get): skipped"],
      ['/paths/~1c/get', "would be named 'pets.get_thing2', like the operation at /paths/~1b/get: skipped (exclude one, or give it an operationId)"],
    ]);
  });

  it('names are the operationId in snake case: hyphens, slashes and dots become one underscore; a collision is still reported per operation', async () => {
    const { names, problems } = await skipped(
      oa31({
        '/a': { get: { operationId: 'issues/list-for-repo', responses: ok } },
        '/b': { get: { operationId: 'repos.get--readme', responses: ok } },
        '/c': { get: { operationId: 'issues_list_for_repo', responses: ok } },
        '/d': { get: { operationId: 'createPet-v2', responses: ok } },
      }),
    );
    expect(names).toEqual(['pets.issues_list_for_repo', 'pets.repos_get_readme', 'pets.create_pet_v2']);
    expect(problems.map((p) => [p.path, p.message])).toEqual([
      ['/paths/~1c/get', "would be named 'pets.issues_list_for_repo', like the operation at /paths/~1a/get: skipped (exclude one, or give it an operationId)"],
    ]);
  });

  it('a remote or unresolvable $ref (never fetched), a required cookie parameter, an undeclared path parameter, two arguments of one name', async () => {
    const { names, problems, warnings } = await skipped(
      oa31({
        '/remote': { get: { operationId: 'remote', responses: ok, parameters: [{ name: 'q', in: 'query', schema: { $ref: 'http://127.0.0.1:1/evil.json#/Q' } }] } },
        '/local': { get: { operationId: 'local', responses: ok, parameters: [{ name: 'q', in: 'query', schema: { $ref: '#/components/schemas/Missing' } }] } },
        '/cookie': { get: { operationId: 'cookie', responses: ok, parameters: [{ name: 'session', in: 'cookie', required: true, schema: { type: 'string' } }, { name: 'pref', in: 'cookie', schema: { type: 'string' } }] } },
        '/items/{id}': { get: { operationId: 'undeclared', responses: ok } },
        '/twice/{id}': { get: { operationId: 'twice', responses: ok, parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }, { name: 'id', in: 'query', schema: { type: 'string' } }] } },
        '/fine': { get: { operationId: 'fine', responses: ok, parameters: [{ name: 'pref', in: 'cookie', schema: { type: 'string' } }] } },
      }),
    );
    expect(names).toEqual(['pets.fine']);
    expect(problems.map((p) => [p.path, p.message, typeof p.line])).toEqual([
      ['/paths/~1remote/get/parameters/0/schema/$ref', "GET /remote: remote $ref 'http://127.0.0.1:1/evil.json#/Q' is not fetched (only references inside the document are followed): skipped", 'number'],
      ['/paths/~1local/get/parameters/0/schema/$ref', "GET /local: $ref '#/components/schemas/Missing' does not resolve inside the document: skipped", 'number'],
      ['/paths/~1cookie/get/parameters/0', "GET /cookie: cookie parameter 'session' is required: cookie parameters are not sent: skipped", 'number'],
      ['/paths/~1items~1{id}/get', 'GET /items/{id}: path parameter {id} is not declared: skipped', 'number'],
      ['/paths/~1twice~1{id}/get/parameters/1', "GET /twice/{id}: two arguments would be named 'id' (arguments are the parameters by name, and the body under 'body'): skipped", 'number'],
    ]);
    expect(warnings.map((w) => w.message)).toContain("optional cookie parameter 'pref' is left out: cookie parameters are not sent");
  });

  it('the line of a skip is the line of the operation in the original YAML text', async () => {
    const text = [
      'openapi: 3.1.0',
      'info: { title: t, version: "1" }',
      'paths:',
      '  /a:',
      '    get:',
      '      operationId: a',
      '      parameters:',
      '        - name: q',
      '          in: query',
      '          style: matrix',
      '      responses: {}',
    ].join('\n');
    const r = await readDocument(text, { file: DOC });
    if ('problems' in r) throw new Error('unexpected');
    const { problems } = operationDefs({ kind: 'openapi', name: 'p', spec: 'x', baseUrl: 'http://127.0.0.1:9' } as OpenApiFile, r.doc, r.lineOf, { file: DOC, refs: r.refs });
    expect(problems[0]).toMatchObject({ line: 10, path: '/paths/~1a/get/parameters/0/style' });
  });

  it('in a JSON document too (lines found by one scan, only when a problem asks)', async () => {
    const doc = oa31({ '/a': { get: { operationId: 'a', responses: ok } }, '/b': { get: { operationId: 'b', parameters: [{ name: 'q', in: 'query', style: 'label', schema: str }], responses: ok } } });
    const text = JSON.stringify(doc, null, 2);
    const r = await readDocument(text, { file: 'api.json' });
    if ('problems' in r) throw new Error('unexpected');
    const { problems } = operationDefs({ kind: 'openapi', name: 'p', spec: 'x', baseUrl: 'http://127.0.0.1:9' } as OpenApiFile, r.doc, r.lineOf, { file: 'api.json', refs: r.refs });
    const want = text.split('\n').findIndex((l) => l.includes('"style": "label"')) + 1;
    expect(problems).toEqual([expect.objectContaining({ file: 'api.json', line: want, path: '/paths/~1b/get/parameters/0/style' })]);
    const lines = text.split('\n');
    const b = lines.findIndex((l) => l.includes('"/b"'));
    expect(r.lineOf('/paths/~1b/get')).toBe(b + 2); // the key "get" on the line after "/b"
    expect(lines[b + 1]).toContain('"get"');
  });

  it('leaves out webhooks and media-type examples before dereferencing, and keeps components/examples while a schema example points into it', async () => {
    const body = (schema: unknown) => ({ content: { 'application/json': { schema, examples: { d: { $ref: '#/components/examples/E' } } } } });
    const pet = { type: 'object', properties: { p: { type: 'object', example: { $ref: '#/components/examples/E' } } } };
    const paths = { '/a': { post: { operationId: 'a', requestBody: body({ $ref: '#/components/schemas/Pet' }), responses: { '200': { description: 'ok', ...body(pet) } } } } };
    const components = { examples: { E: { value: { n: 1 } } }, schemas: { Pet: { type: 'object' } } };
    const hooks = { 'x-webhooks': { w: { post: { requestBody: body({ $ref: '#/components/schemas/Pet' }) } } } };
    for (const asJson of [true, false]) {
      const r = await read(oa30(paths, { components, ...hooks }), asJson);
      expect(r.doc['x-webhooks']).toBeUndefined();
      const { ops, problems } = operationDefs({ kind: 'openapi', name: 'p', spec: 'x', baseUrl: 'http://127.0.0.1:9' } as OpenApiFile, r.doc, r.lineOf, { file: DOC, refs: r.refs });
      expect(problems).toEqual([]);
      // The schema's example still resolves (the shape a model is shown is unchanged).
      expect(ops[0]!.file.outputSchema).toMatchObject({ properties: { p: { examples: [{ value: { n: 1 } }] } } });
      expect((r.doc['components'] as Record<string, unknown>)['examples']).toBeDefined();
      // Only media types' examples point into it: left out with them.
      const r2 = await read(oa30({ '/a': { post: { ...paths['/a'].post, responses: ok } } }, { components, ...hooks }), asJson);
      expect((r2.doc['components'] as Record<string, unknown>)['examples']).toBeUndefined();
      expect(JSON.stringify(r2.doc)).not.toContain('"examples"');
    }
    // A $ref into webhooks keeps them.
    const kept = await read(oa30({ '/b': { get: { operationId: 'b', responses: { '200': { $ref: '#/x-webhooks/w/post/requestBody' } } } } }, hooks), true);
    expect(kept.doc['x-webhooks']).toBeDefined();
  });

  it('finds JSON lines past strings that hold brackets, quotes and escapes, in arrays, and for duplicate keys (the last, as parsed)', async () => {
    const text = [
      '{"openapi": "3.1.0", "info": {"title": "t", "version": "1"},',
      ' "x-a\\"}{": {"s": "]}\\\\", "t" : [ 1 ,',
      '   {"u": "\\"[{" }, [2,',
      '   3] ]},',
      ' "x-dup": 1,',
      ' "x-dup":',
      '   {"v": true}, "x-b/c~d": {"e": null},',
      ' "paths": {}',
      '}',
    ].join('\n');
    const r = await readDocument(text, { file: 'api.json' });
    if ('problems' in r) throw new Error(JSON.stringify(r.problems));
    expect(r.doc['x-a"}{']).toBeDefined(); // the text is what JSON.parse reads
    expect(r.lineOf('/x-a"}{/t')).toBe(2);
    expect(r.lineOf('/x-a"}{/t/1')).toBe(3);
    expect(r.lineOf('/x-a"}{/t/1/u')).toBe(3);
    expect(r.lineOf('/x-a"}{/t/2/1')).toBe(4);
    expect(r.lineOf('/x-dup/v')).toBe(7);
    expect(r.lineOf('/x-b~1c~0d/e')).toBe(7);
    expect(r.lineOf('/paths/~1missing/get')).toBe(8); // a pointer that is not there: its nearest parent
    expect(r.lineOf('/x-a"}{/t/01')).toBe(2);
  });

  it('a bad x-toolgate-side-effect skips the operation rather than guessing', async () => {
    const { names, problems } = await skipped(oa31({ '/a': { post: { operationId: 'a', 'x-toolgate-side-effect': 'reed', responses: ok } } }));
    expect(names).toEqual([]);
    expect(problems[0]!.path).toBe('/paths/~1a/post/x-toolgate-side-effect');
  });
});

describe('OpenAPI documents that cannot be read', () => {
  const problemsOf = async (text: string, file = DOC) => {
    const r = await readDocument(text, { file });
    return 'problems' in r ? r.problems : [];
  };

  it('invalid YAML and invalid JSON are problems with a line', async () => {
    expect(await problemsOf('openapi: 3.1.0\npaths:\n  /a: [\n')).toEqual([expect.objectContaining({ file: DOC, line: expect.any(Number), message: expect.stringMatching(/^invalid YAML/) })]);
    const json = await problemsOf('{\n  "openapi": "3.1.0",\n  "paths": {,}\n}', 'api.json');
    expect(json).toEqual([expect.objectContaining({ file: 'api.json', line: 3, message: expect.stringMatching(/^invalid JSON/) })]);
  });

  it('not an OpenAPI document, or an unsupported version', async () => {
    expect(await problemsOf('name: x\n')).toEqual([expect.objectContaining({ message: expect.stringContaining('not an OpenAPI document') })]);
    expect(await problemsOf('openapi: 4.0.0\npaths: {}\n')).toEqual([expect.objectContaining({ path: '/openapi', line: 1, message: expect.stringContaining('unsupported version') })]);
  });

  it('a relative server needs a baseUrl; server variables take the file\'s values, checked against their enum', async () => {
    const doc = oa31({ '/a': { get: { operationId: 'a', responses: ok } } }, { servers: [{ url: 'https://{region}.example.com/{v}', variables: { region: { default: 'eu', enum: ['eu', 'us'] }, v: { default: 'v1' } } }] });
    const r = await read(doc);
    const run = (spec: Partial<OpenApiFile>) => operationDefs({ kind: 'openapi', name: 'p', spec: 'x', ...spec } as OpenApiFile, r.doc, r.lineOf, { file: DOC });
    expect(run({}).ops[0]!.plan).toMatchObject({ origin: 'https://eu.example.com', basePath: '/v1' });
    expect(run({ serverVariables: { region: 'us' } }).ops[0]!.plan.origin).toBe('https://us.example.com');
    expect(run({ serverVariables: { region: 'evil.example.net#' } }).problems[0]!.message).toContain('is not one of');
    const rel = await read(oa31({ '/a': { get: { operationId: 'a', responses: ok } } }, { servers: [{ url: '/v2' }] }));
    expect(operationDefs({ kind: 'openapi', name: 'p', spec: 'x' } as OpenApiFile, rel.doc, rel.lineOf, { file: DOC }).problems[0]!.message).toContain('is relative: set baseUrl');
    expect(operationDefs({ kind: 'openapi', name: 'p', url: 'http://127.0.0.1:7/docs/openapi.json' } as OpenApiFile, rel.doc, rel.lineOf, { file: DOC }).ops[0]!.plan).toMatchObject({ origin: 'http://127.0.0.1:7', basePath: '/v2' });
  });

  it('security: the first requirement with secrets is used; a scheme without one is noted; an auth name the document lacks is a problem', async () => {
    const doc = oa31(
      {
        '/a': { get: { operationId: 'a', security: [{ oauth: ['read', 'write'] }, { key: [] }], responses: ok } },
        '/b': { get: { operationId: 'b', security: [{ basic: [] }], responses: ok } },
        '/c': { get: { operationId: 'c', security: [{}, { key: [] }], responses: ok } },
      },
      {
        security: [{ key: [] }],
        components: {
          securitySchemes: {
            key: { type: 'apiKey', in: 'query', name: 'api_key' },
            basic: { type: 'http', scheme: 'basic' },
            oauth: { type: 'oauth2', flows: { clientCredentials: { tokenUrl: '/oauth/token', scopes: {} } } },
          },
        },
      },
    );
    const r = await defsOf(doc, { auth: { key: 'k-123456', oauth: 'client-1:s3cr3t-value', nosuch: 'x' } });
    const [a, b, c] = r.ops;
    expect(a!.plan.auth).toEqual([
      {
        scheme: 'oauth',
        kind: 'oauth2',
        credentials: { kind: 'clientCredentials', client: { tokenUrl: 'http://127.0.0.1:9/oauth/token', clientId: 'client-1', clientSecret: 's3cr3t-value', scope: 'read write', audience: undefined, authMethod: 'client_secret_basic' } },
        tokenKey: expect.any(String),
      },
    ]);
    expect(b!.plan.auth).toEqual([]);
    expect(c!.plan.auth).toEqual([{ scheme: 'key', kind: 'apiKey', in: 'query', name: 'api_key', value: 'k-123456' }]);
    expect(r.warnings.map((w) => w.message)).toEqual([expect.stringContaining("GET /b: its security requirements cannot be met, so calls go without credentials: no secret for 'basic' in auth")]);
    const many = await defsOf(oa31({ '/x': { get: { responses: ok }, put: { responses: ok } }, '/y': { get: { responses: ok } } }, { security: [{ basic: [] }], components: { securitySchemes: { basic: { type: 'http', scheme: 'basic' } } } }));
    expect(many.warnings.map((w) => w.message)).toEqual(["3 operations (GET /x, PUT /x, GET /y): its security requirements cannot be met, so calls go without credentials: no secret for 'basic' in auth"]);
    expect(r.problems).toEqual([expect.objectContaining({ path: '/auth/nosuch', message: expect.stringContaining("no securityScheme 'nosuch'") })]);
  });
});

describe('schemas checked at load without compiling them (what imported $defs and patterns need)', () => {
  const ctx = { file: 'f', fileHash: 'h', defaults, ajv: createAjv(), lineOf: () => undefined };
  const tool = (inputSchema: Record<string, unknown>) =>
    compileOperation(
      { spec: 'p', name: 'p.a', operationId: 'a', method: 'GET', path: '/a', pointer: '/paths/~1a/get', tags: [], overrideKey: undefined, hash: 'x', findings: [], plan: { method: 'GET', origin: 'http://127.0.0.1:9', basePath: '', path: '/a', params: [], auth: [] }, file: { name: 'p.a', description: 'd', sideEffect: 'read', inputSchema, backends: [{ id: 'p', http: { method: 'GET', url: 'http://127.0.0.1:9/a' } }] } },
      ctx,
    );

  it('a $ref to a missing definition and a bad pattern are still load-time problems; a present $defs target validates on first use', () => {
    expect(tool({ type: 'object', properties: { a: { $ref: '#/$defs/Missing' } }, $defs: { Other: {} } })).toEqual([expect.objectContaining({ path: '/inputSchema', message: expect.stringContaining('not a valid JSON Schema') })]);
    expect(tool({ type: 'object', properties: { a: { type: 'string', pattern: '(' } } })).toEqual([expect.objectContaining({ path: '/inputSchema' })]);
    expect(tool({ type: 'object', patternProperties: { '[': {} } })).toEqual([expect.objectContaining({ path: '/inputSchema' })]);
    const t = tool({ type: 'object', properties: { n: { $ref: '#/$defs/N' }, code: { type: 'string', pattern: '^[a-z]+$' } }, $defs: { N: { type: 'object', properties: { next: { $ref: '#/$defs/N' } }, additionalProperties: false } } });
    if (Array.isArray(t)) throw new Error(JSON.stringify(t));
    expect(t.validateArgs({ n: { next: { next: {} } }, code: 'abc' })).toBe(true);
    expect(t.validateArgs({ n: { next: { nope: 1 } } })).toBe(false);
    expect(t.validateArgs({ code: 'ABC' })).toBe(false);
  });
});

describe('schemas shared by many operations are checked once, and a bad one fails every tool that holds it', () => {
  it('an invalid component schema is a problem of each operation using it; the others compile', async () => {
    const bad = { type: 'object', properties: { name: { type: 'string', required: true } } };
    const good = { type: 'object', properties: { id: { type: 'integer' } } };
    const body = (ref: string) => ({ required: true, content: { 'application/json': { schema: { $ref: ref } } } });
    const { ops } = await defsOf(
      oa31(
        {
          '/a': { post: { operationId: 'a', requestBody: body('#/components/schemas/Bad'), responses: ok } },
          '/b': { put: { operationId: 'b', requestBody: body('#/components/schemas/Bad'), responses: ok } },
          '/c': { post: { operationId: 'c', requestBody: body('#/components/schemas/Good'), responses: ok } },
          '/d': { put: { operationId: 'd', requestBody: body('#/components/schemas/Good'), responses: ok } },
        },
        { components: { schemas: { Bad: bad, Good: good } } },
      ),
    );
    const ajv = createAjv();
    const results = ops.map((o) => compileOperation(o, { file: 'f', fileHash: 'h', defaults, ajv, lineOf: () => undefined }));
    expect(results.map((r) => (Array.isArray(r) ? r[0]!.message.slice(0, 26) : 'ok'))).toEqual(['not a valid JSON Schema: s', 'not a valid JSON Schema: s', 'ok', 'ok']);
    const [, , c, d] = results;
    if (Array.isArray(c) || Array.isArray(d)) throw new Error('unexpected');
    const idOf = (t: typeof c) => ((((t!.inputSchema['properties'] as Record<string, Record<string, unknown>>)['body']!)['properties']) as Record<string, unknown>)['id'];
    expect(idOf(c)).toBe(idOf(d)); // one tree, shared by both tools
    expect(c!.validateArgs({ body: { id: 1 } })).toBe(true);
    expect(d!.validateArgs({ body: { id: 'x' } })).toBe(false);
  });
});
