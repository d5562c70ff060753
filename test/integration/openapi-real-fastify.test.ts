import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { installDocuments, toolDef } from '../helpers/openapi-real.js';
import { startRestApp, type RestApp } from '../helpers/rest-app.js';

const KEYS = { agent: 'k-agent-oa-0001', ops: 'k-ops-oa-00002' };
const as = (who: keyof typeof KEYS) => ({ key: KEYS[who] });

/**
 * A real REST app (fastify) whose document @fastify/swagger generated, imported as a kind: openapi
 * file: every parameter kind must arrive where the app reads it, with the credentials the app checks.
 */
describe('a fastify + @fastify/swagger app as a kind: openapi file', () => {
  let rest: RestApp;
  let gw: TestGateway;
  const last = (operation: string) => rest.seen.filter((s) => s.operation === operation).at(-1);

  beforeAll(async () => {
    rest = await startRestApp();
    gw = await startGateway({
      env: { PET_KEY: rest.apiKey, PET_ADMIN: rest.adminToken },
      config: {
        auth: {
          keys: [
            { id: 'agent-1', key: KEYS.agent, roles: ['agent'] },
            { id: 'ops', key: KEYS.ops, roles: ['approver', 'admin'] },
          ],
        },
      },
    });
    await installDocuments(
      gw,
      { 'specs/pets.json': readFileSync(rest.specFile, 'utf8') },
      {
        'pets.yaml': {
          kind: 'openapi',
          name: 'pets',
          spec: './specs/pets.json',
          baseUrl: rest.url,
          auth: { apiKey: '${env:PET_KEY}', adminToken: '${env:PET_ADMIN}' },
        },
      },
    );
  });
  afterAll(async () => {
    await gw?.close();
    await rest?.close();
  });

  it('imports every operation of the generated document as a tool, with no file problem', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/admin/reload', headers: { authorization: `Bearer ${KEYS.ops}` } });
    expect(res.json().errors).toEqual([]);
    const names = gw.app.gw.registry.tools.map((t) => t.name).filter((n) => n.startsWith('pets.'));
    expect(names).toEqual(['pets.add_pet_note', 'pets.create_pet', 'pets.delete_pet', 'pets.get_pet', 'pets.list_pets', 'pets.list_pets_legacy']);
  });

  it('describes each operation: summary, side effect from the method, tags, parameters, body, 2xx schema', async () => {
    const list = await toolDef(gw, 'pets.list_pets', KEYS.agent);
    expect(list['description']).toContain('List pets');
    expect(list['description']).toContain('filtered by tag and status');
    expect(list['sideEffect']).toBe('read');
    expect(list['tags']).toContain('pets');
    const input = list['inputSchema'] as { properties: Record<string, Record<string, unknown>>; required?: string[] };
    expect(input.properties['tag']).toMatchObject({ type: 'array', items: { type: 'string' } });
    expect(input.properties['limit']).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
    expect(input.properties['status']).toMatchObject({ enum: ['available', 'sold'] });
    expect(input.required ?? []).toEqual([]);
    // Only object answers get an outputSchema (an MCP outputSchema is an object): this one is an array.
    expect(list['outputSchema']).toBeUndefined();
    const get = await toolDef(gw, 'pets.get_pet', KEYS.agent);
    // The 200 response's $ref to components.schemas.Pet is resolved into the outputSchema.
    expect(get['outputSchema']).toMatchObject({ type: 'object', required: ['id', 'name', 'tags', 'status'], properties: { status: { enum: ['available', 'sold'] } } });
    expect((get['inputSchema'] as { required: string[] }).required).toEqual(['petId']);

    const create = await toolDef(gw, 'pets.create_pet', KEYS.agent);
    expect(create['sideEffect']).toBe('write');
    const ci = create['inputSchema'] as { properties: Record<string, Record<string, unknown>>; required: string[] };
    expect(ci.required).toEqual(expect.arrayContaining(['x-trace-id', 'body']));
    expect(ci.properties['body']).toMatchObject({ type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 } } });

    const del = await toolDef(gw, 'pets.delete_pet', KEYS.agent);
    expect(del['sideEffect']).toBe('destructive');
    expect((del['inputSchema'] as { required: string[] }).required).toEqual(['petId']);

    const legacy = await toolDef(gw, 'pets.list_pets_legacy', KEYS.agent);
    expect(String(legacy['description']).toLowerCase()).toContain('deprecated');
    expect(String(list['description']).toLowerCase()).not.toContain('deprecated');
    // Marked, not refused: toolgate's own `deprecated` would answer 403, and the operation still works.
    const called = await gw.call('pets.list_pets_legacy', {}, as('agent'));
    expect(called.statusCode, called.body).toBe(200);
    expect(last('listPetsLegacy')?.url).toBe('/legacy/pets');
  });

  it('sends a query array, an enum and an integer as the app parses them, with the API key', async () => {
    const res = await gw.call('pets.list_pets', { tag: ['dog', 'cat'], status: 'available', limit: 5 }, as('agent'));
    expect(res.statusCode, res.body).toBe(200);
    const got = last('listPets');
    expect(got?.query).toEqual({ tag: ['dog', 'cat'], status: 'available', limit: 5 });
    expect(got?.url).toMatch(/^\/pets\?/);
    expect(got?.headers['x-api-key']).toBe(rest.apiKey);
    const pets = JSON.parse(res.json().result.content[0].text) as { id: string }[];
    expect(pets.map((p) => p.id)).toEqual(['p1', 'a b/c'].filter((id) => rest.pets.get(id)?.status === 'available' && rest.pets.get(id)?.tags.some((t) => ['dog', 'cat'].includes(t))));
  });

  it('encodes a path segment (a space and a slash stay one segment) and sends a header parameter', async () => {
    const res = await gw.call('pets.get_pet', { petId: 'a b/c', 'x-request-tag': 'trace-7' }, as('agent'));
    expect(res.statusCode, res.body).toBe(200);
    const got = last('getPet');
    expect(got?.url).toBe('/pets/a%20b%2Fc');
    expect(got?.params).toEqual({ petId: 'a b/c' });
    expect(got?.headers['x-request-tag']).toBe('trace-7');
    expect(res.json().result.structuredContent).toMatchObject({ id: 'a b/c', name: 'Slash' });
  });

  it('sends the JSON body under `body` and the required header; refuses a call missing them before the app sees it', async () => {
    const before = rest.seen.length;
    const bad = await gw.call('pets.create_pet', { body: { name: 'Bo' } }, as('agent'));
    expect(bad.statusCode).toBe(422);
    expect(bad.json().error.code).toBe('INVALID_ARGUMENTS');
    const extra = await gw.call('pets.create_pet', { 'x-trace-id': 'abc-1', body: { name: 'Bo', colour: 'red' } }, as('agent'));
    expect(extra.statusCode).toBe(422);
    expect(rest.seen.length).toBe(before);

    const res = await gw.call('pets.create_pet', { 'x-trace-id': 'abc-1', body: { name: 'Bo', tags: ['new'], age: 2 } }, as('agent'));
    expect(res.statusCode, res.body).toBe(200);
    const got = last('createPet');
    expect(got?.contentType).toMatch(/^application\/json/);
    expect(got?.body).toEqual({ name: 'Bo', tags: ['new'], age: 2, status: 'available' });
    expect(got?.headers['x-trace-id']).toBe('abc-1');
    expect(res.json().result.structuredContent).toMatchObject({ name: 'Bo', tags: ['new'], status: 'available' });
  });

  it('sends an application/x-www-form-urlencoded body as a form', async () => {
    const res = await gw.call('pets.add_pet_note', { petId: 'p2', body: { text: 'likes fish & milk', priority: 'high' } }, as('agent'));
    expect(res.statusCode, res.body).toBe(200);
    const got = last('addPetNote');
    expect(got?.contentType).toMatch(/^application\/x-www-form-urlencoded/);
    expect(got?.body).toEqual({ text: 'likes fish & milk', priority: 'high' });
    expect(res.json().result.structuredContent).toEqual({ petId: 'p2', text: 'likes fish & milk', priority: 'high' });
  });

  it('gates the DELETE: pending until approved, then sent with both credentials its operation requires', async () => {
    const before = rest.seen.filter((s) => s.operation === 'deletePet').length;
    const res = await gw.call('pets.delete_pet', { petId: 'p2' }, as('agent'));
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json().status).toBe('pending_confirmation');
    expect(rest.seen.filter((s) => s.operation === 'deletePet').length).toBe(before);
    expect(rest.pets.has('p2')).toBe(true);

    const id = res.json().confirmation.id as string;
    const ok = await gw.app.inject({ method: 'POST', url: `/v1/confirmations/${id}/approve`, headers: { authorization: `Bearer ${KEYS.ops}` }, payload: {} });
    expect(ok.statusCode, ok.body).toBe(200);
    const got = last('deletePet');
    expect(got?.method).toBe('DELETE');
    expect(got?.headers['authorization']).toBe(`Bearer ${rest.adminToken}`);
    expect(got?.headers['x-api-key']).toBe(rest.apiKey);
    expect(rest.pets.has('p2')).toBe(false);
    expect(rest.refused).toEqual([]);
  });

  it('checks the answer against the 2xx schema: an answer that breaks it is a 502, not a result', async () => {
    rest.corrupt.add('getPet');
    try {
      const res = await gw.call('pets.get_pet', { petId: 'p1' }, as('agent'));
      expect(res.statusCode).toBe(502);
      expect(res.json().error.code).toBe('UPSTREAM_ERROR');
      expect(res.json().error.message).toContain('outputSchema');
    } finally {
      rest.corrupt.delete('getPet');
    }
  });

  it('never takes the scheme or host from arguments: a petId that looks like a URL stays a path segment', async () => {
    const res = await gw.call('pets.get_pet', { petId: 'http://evil.example/x?y=1#z' }, as('agent'));
    expect(res.statusCode).toBe(502); // the app's own 404 for an unknown pet
    const got = last('getPet');
    expect(got?.params).toEqual({ petId: 'http://evil.example/x?y=1#z' });
    expect(got?.url).toBe(`/pets/${encodeURIComponent('http://evil.example/x?y=1#z')}`);
  });
  it('hostile values stay data: a query value carrying & and =, a header value with a line break', async () => {
    const res = await gw.call('pets.list_pets', { tag: ['dog&status=sold', 'a=b#c'] }, as('agent'));
    expect(res.statusCode, res.body).toBe(200);
    expect(last('listPets')?.query).toEqual({ tag: ['dog&status=sold', 'a=b#c'], limit: 20 });
    const before = rest.seen.length;
    const split = await gw.call('pets.get_pet', { petId: 'p1', 'x-request-tag': 'x\r\nx-api-key: stolen' }, as('agent'));
    expect(split.statusCode).toBe(422);
    expect(split.json().error.code).toBe('INVALID_ARGUMENTS');
    expect(rest.seen.length).toBe(before);
  });

  it('the same document served by the app (url:) and as YAML (spec:), with the server variable for the port, gives the same tools', async () => {
    const port = new URL(rest.url).port;
    const common = { auth: { apiKey: '${env:PET_KEY}', adminToken: '${env:PET_ADMIN}' }, serverVariables: { port } };
    await installDocuments(
      gw,
      { 'specs/pets.yaml': readFileSync(rest.specYamlFile, 'utf8') },
      {
        'pets-url.yaml': { kind: 'openapi', name: 'petsurl', url: rest.docUrl, ...common },
        'pets-yaml.yaml': { kind: 'openapi', name: 'petsyaml', spec: './specs/pets.yaml', ...common },
      },
    );
    expect(gw.app.gw.registry.problems).toEqual([]);
    const shape = (prefix: string) =>
      gw.app.gw.registry.tools
        .filter((t) => t.name.startsWith(`${prefix}.`))
        .map((t) => ({ name: t.name.slice(prefix.length + 1), description: t.description, sideEffect: t.sideEffect, inputSchema: t.inputSchema, outputSchema: t.outputSchema }));
    expect(shape('pets').length).toBe(6);
    expect(shape('petsurl')).toEqual(shape('pets'));
    expect(shape('petsyaml')).toEqual(shape('pets'));
    // No baseUrl: the document's server, http://127.0.0.1:{port}, with the variable given.
    const res = await gw.call('petsurl.get_pet', { petId: 'p1' }, as('agent'));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().result.structuredContent).toMatchObject({ id: 'p1', name: 'Rex' });
    expect(last('getPet')?.headers['x-api-key']).toBe(rest.apiKey);
  });
});
