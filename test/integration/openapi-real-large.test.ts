import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { fixtureText, installDocuments, operationsOf, toolDef } from '../helpers/openapi-real.js';
import { json, Upstream } from '../helpers/upstream.js';

/**
 * Two large public documents (test/fixtures/openapi/README.md) imported whole: GitHub's REST API
 * (OpenAPI 3.0.3, 1,223 operations) and Kubernetes 1.13 (Swagger 2.0, 1,014 operations). The share
 * imported cleanly has a floor measured on this code; a few operations are called against a local
 * stand-in upstream to see the request built from a real document's parameters.
 */
const DOCS = {
  github: { gz: 'github-rest-3.0.json.gz', floor: 1 },
  // 993 of 1,014: the 21 proxy operations with a `{path}` path parameter and a `path` query parameter are skipped (two arguments of one name).
  kubernetes: { gz: 'kubernetes-1.13-swagger-2.0.json.gz', floor: 0.97 },
} as const;

describe('large public OpenAPI documents as kind: openapi files', () => {
  let up: Upstream;
  let gw: TestGateway;
  const texts = { github: fixtureText(DOCS.github.gz), kubernetes: fixtureText(DOCS.kubernetes.gz) };
  const counts = { github: operationsOf(JSON.parse(texts.github)).length, kubernetes: operationsOf(JSON.parse(texts.kubernetes)).length };
  const summary = (name: string) => {
    const s = gw.app.gw.registry.openapi.find((d) => d.name === name);
    if (!s) throw new Error(`no summary for ${name}`);
    return s;
  };
  /** The tool made of `METHOD /path` (from the import summary: names are checked where they matter). */
  const toolOf = (name: string, method: string, path: string): string => {
    const o = summary(name).operations.find((x) => x.method === method && x.path === path);
    if (!o) throw new Error(`${name}: no tool for ${method} ${path}`);
    return o.tool;
  };
  const lastSeen = () => {
    const s = up.seen.at(-1);
    if (!s) throw new Error('the upstream saw nothing');
    return { ...s, parsed: new URL(s.url, up.url) };
  };

  beforeAll(async () => {
    up = await new Upstream().start();
    up.on((req, res) => {
      const path = new URL(req.url ?? '/', up.url).pathname;
      if (path.endsWith('/issues') && req.method === 'GET') return json(res, 200, []);
      if (path.endsWith('/pods') && req.method === 'GET') return json(res, 200, { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: [] });
      return json(res, 200, {});
    });
    gw = await startGateway({});
    await installDocuments(
      gw,
      { 'specs/github.json': texts.github, 'specs/kubernetes.json': texts.kubernetes },
      {
        'github.yaml': { kind: 'openapi', name: 'github', spec: './specs/github.json', baseUrl: up.url },
        'kubernetes.yaml': { kind: 'openapi', name: 'kubernetes', spec: './specs/kubernetes.json', baseUrl: up.url },
      },
    );
  }, 120_000); // 17 MB of documents on a shared 2-core machine: no timing is asserted here (see bench/openapi-import.mjs)
  afterAll(async () => {
    await gw?.close();
    await up?.close();
  });

  it('counts the operations of each document independently', () => {
    expect(counts).toEqual({ github: 1223, kubernetes: 1014 });
  });

  for (const name of ['github', 'kubernetes'] as const) {
    it(`${name}: imports without a file problem, at least ${DOCS[name].floor * 100} % of the operations, each skipped one with a reason`, () => {
      expect(gw.app.gw.registry.problems.filter((p) => p.file.endsWith(`${name}.yaml`))).toEqual([]);
      const s = summary(name);
      const imported = s.operations.length;
      expect(imported + s.skipped.length).toBe(counts[name]);
      expect(imported / counts[name]).toBeGreaterThanOrEqual(DOCS[name].floor);
      for (const k of s.skipped) {
        expect(k.reason).toMatch(/^(GET|PUT|POST|DELETE|PATCH|HEAD|OPTIONS) \/\S* ?: /); // which operation, then why
        // Labelled with the operation, also when the problem is in a path-level parameter (not `PARAMETERS /api/…`).
        expect(k.operation).toMatch(/^(GET|PUT|POST|DELETE|PATCH|HEAD|OPTIONS) \/\S*$/);
        expect(k.reason.startsWith(`${k.operation}: `)).toBe(true);
        expect(k.path).toMatch(/^\/paths\//);
        expect(k.line).toBeGreaterThan(0);
      }
      expect(gw.app.gw.registry.tools.filter((t) => t.name.startsWith(`${name}.`)).length).toBe(imported);
    });

    it(`${name}: the definition checks (tool poisoning) hold no operation of a real document`, () => {
      expect(summary(name).operations.filter((o) => o.held)).toEqual([]);
      expect(gw.app.gw.registry.tools.filter((t) => t.name.startsWith(`${name}.`) && t.openapi?.held)).toEqual([]);
    });
  }

  it('github: a sample tool has its path parameters required, query parameters optional, enums and the 2xx schema', async () => {
    expect(summary('github').version).toMatch(/^3\.0/);
    const listIssues = toolOf('github', 'GET', '/repos/{owner}/{repo}/issues');
    const def = await toolDef(gw, listIssues);
    expect(def['sideEffect']).toBe('read');
    const input = def['inputSchema'] as { properties: Record<string, Record<string, unknown>>; required: string[] };
    expect([...input.required].sort()).toEqual(['owner', 'repo']);
    expect(input.properties['owner']).toMatchObject({ type: 'string' });
    expect(input.properties['state']).toMatchObject({ enum: ['open', 'closed', 'all'] });
    expect(input.properties['per_page']).toMatchObject({ type: 'integer' });
    expect(def['outputSchema']).toBeUndefined(); // an array of issues: only object answers get one
    expect(def['tags']).toContain('issues');
    const repo = await toolDef(gw, 'github.repos_get');
    expect(repo['outputSchema']).toMatchObject({ type: 'object', required: expect.arrayContaining(['id', 'name', 'full_name', 'owner']) });
    const create = await toolDef(gw, 'github.issues_create');
    const ci = create['inputSchema'] as { properties: Record<string, Record<string, unknown>>; required: string[] };
    expect(ci.required).toEqual(expect.arrayContaining(['owner', 'repo', 'body']));
    expect(ci.properties['body']).toMatchObject({ type: 'object', required: ['title'] });
    expect((await toolDef(gw, 'github.repos_delete'))['sideEffect']).toBe('destructive');
  });

  it('github: a call builds the path (segments encoded) and the query from the arguments', async () => {
    expect(toolOf('github', 'GET', '/repos/{owner}/{repo}/issues')).toBe('github.issues_list_for_repo'); // operationId issues/list-for-repo, in snake case
    const res = await gw.call(toolOf('github', 'GET', '/repos/{owner}/{repo}/issues'), { owner: 'octo cat', repo: 'hello/world', state: 'open', labels: 'bug,ui', per_page: 5 });
    expect(res.statusCode, res.body).toBe(200);
    const s = lastSeen();
    expect(s.method).toBe('GET');
    expect(s.parsed.pathname).toBe('/repos/octo%20cat/hello%2Fworld/issues');
    expect(Object.fromEntries(s.parsed.searchParams)).toEqual({ state: 'open', labels: 'bug,ui', per_page: '5' });
  });

  it('github: a POST sends its JSON body; an answer that does not match the 201 schema is refused', async () => {
    const res = await gw.call('github.issues_create', { owner: 'o', repo: 'r', body: { title: 'Broken', labels: ['bug'] } });
    const s = lastSeen();
    expect(s.method).toBe('POST');
    expect(s.parsed.pathname).toBe('/repos/o/r/issues');
    expect(s.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(s.body)).toEqual({ title: 'Broken', labels: ['bug'] });
    // The stand-in answers {}: the document's issue schema requires many fields.
    expect(res.statusCode).toBe(502);
    expect(res.json().error.message).toContain('outputSchema');
  });

  it('kubernetes (Swagger 2.0): path-level parameters, query parameters, and the call', async () => {
    expect(summary('kubernetes').version).toBe('2.0');
    const def = await toolDef(gw, 'kubernetes.list_core_v1_namespaced_pod');
    const input = def['inputSchema'] as { properties: Record<string, Record<string, unknown>>; required: string[] };
    expect(input.required).toEqual(['namespace']); // declared on the path item, not the operation
    expect(input.properties['labelSelector']).toMatchObject({ type: 'string' });
    expect(input.properties['limit']).toMatchObject({ type: 'integer' });
    const res = await gw.call('kubernetes.list_core_v1_namespaced_pod', { namespace: 'kube-system', labelSelector: 'app=web,tier!=db', limit: 10 });
    expect(res.statusCode, res.body).toBe(200);
    const s = lastSeen();
    expect(s.parsed.pathname).toBe('/api/v1/namespaces/kube-system/pods');
    expect(Object.fromEntries(s.parsed.searchParams)).toEqual({ labelSelector: 'app=web,tier!=db', limit: '10' });
    expect(res.json().result.structuredContent).toMatchObject({ kind: 'PodList', items: [] });
  });

  it('kubernetes: a POST whose document says `consumes: */*` sends its body as JSON', async () => {
    const res = await gw.call('kubernetes.create_core_v1_namespace', { body: { metadata: { name: 'team-a', labels: { env: 'test' } } } });
    const s = lastSeen();
    expect(s.method).toBe('POST');
    expect(s.parsed.pathname).toBe('/api/v1/namespaces');
    expect(s.headers['content-type']).toMatch(/json/);
    expect(JSON.parse(s.body)).toEqual({ metadata: { name: 'team-a', labels: { env: 'test' } } });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('kubernetes: the DELETE of a namespaced pod is destructive and gated; nothing reaches the upstream', async () => {
    const def = await toolDef(gw, 'kubernetes.delete_core_v1_namespaced_pod');
    expect(def['sideEffect']).toBe('destructive');
    const before = up.seen.length;
    const res = await gw.call('kubernetes.delete_core_v1_namespaced_pod', { namespace: 'default', name: 'web-1' });
    expect(res.statusCode, res.body).toBe(202);
    expect(up.seen.length).toBe(before);
  });
});
