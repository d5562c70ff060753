import { Server, UriTemplate } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { Caller } from '../../src/auth/caller.js';
import { PassthroughHub } from '../../src/mcp-server/hub.js';
import type { Passthrough } from '../../src/mcp-server/passthrough.js';
import { route, visibleResources } from '../../src/mcp-server/resources.js';
import type { ResourceTemplate, ServerView, UpstreamCatalog } from '../../src/mcp-server/upstream.js';
import { gatewayTemplate } from '../../src/mcp-server/uris.js';

// (a) routing of template-expanded URIs, (b) the first of two unprefixed servers keeps a clashing
// URI, (c) a session that ends releases its subscriptions: the passthrough's routing and fan-out
// over a catalog of fake servers (the integration tests run the real ones).

const caller: Caller = { id: 'k', roles: new Set(['agent']), toolPatterns: [/^.*$/] };
const all = () => true;

interface Fake {
  view: ServerView;
  resources: string[];
  templates: string[];
}
const server = (name: string, prefix: string, resources: string[], templates: string[] = []): Fake => ({ view: { name, prefix, resources: all, prompts: all }, resources, templates });

function catalog(fakes: Fake[], calls: string[] = []): UpstreamCatalog {
  const sdk = (name: string) => ({
    getServerCapabilities: () => ({ resources: { subscribe: true } }),
    subscribeResource: async ({ uri }: { uri: string }) => void calls.push(`subscribe ${name} ${uri}`),
    unsubscribeResource: async ({ uri }: { uri: string }) => void calls.push(`unsubscribe ${name} ${uri}`),
  });
  const fake = {
    servers: () => fakes.map((f) => f.view),
    byName: (n: string) => fakes.find((f) => f.view.name === n)?.view,
    resources: async (v: ServerView) => (fakes.find((f) => f.view === v)?.resources ?? []).map((uri) => ({ uri, name: uri })),
    templates: async (v: ServerView) => (fakes.find((f) => f.view === v)?.templates ?? []).map((uriTemplate) => ({ template: { uriTemplate, name: uriTemplate } as ResourceTemplate, matcher: new UriTemplate(uriTemplate) })),
    each: async <T>(list: (v: ServerView) => Promise<T[]>) => Promise.all(fakes.map(async (f) => ({ view: f.view, items: await list(f.view) }))),
    session: async (n: string) => ({ era: 'legacy', sdk: sdk(n) }),
    client: async (n: string) => sdk(n),
  };
  return fake as unknown as UpstreamCatalog;
}
const passthrough = (fakes: Fake[]) => ({ catalog: catalog(fakes) }) as unknown as Passthrough;

describe('routing a URI to its server', () => {
  const fakes = [
    server('ev', 'ev', ['demo://static/1'], ['demo://dynamic/{id}']),
    server('plain', '', ['demo://shared', 'plain://one'], ['plain://items/{id}']),
    server('fx', '', ['demo://shared', 'fx://note'], ['plain://items/{id}', 'fx://docs/{+path}']),
  ];
  const p = passthrough(fakes);

  it('a prefixed template URI goes to its server with the value as the client encoded it', async () => {
    const uri = new UriTemplate(gatewayTemplate('ev', 'demo://dynamic/{id}')).expand({ id: 'a/b c' });
    expect(await route(p, caller, uri)).toMatchObject({ view: { name: 'ev' }, upstream: 'demo://dynamic/a%2Fb%20c', listed: uri, template: 'demo://dynamic/{id}' });
  });

  it('an unprefixed template URI goes to the server whose template it matches; the first file keeps a shared template', async () => {
    expect(await route(p, caller, 'fx://docs/a/b.md')).toMatchObject({ view: { name: 'fx' }, upstream: 'fx://docs/a/b.md', template: 'fx://docs/{+path}' });
    expect(await route(p, caller, 'plain://items/9')).toMatchObject({ view: { name: 'plain' }, upstream: 'plain://items/9' });
  });

  it('a URI two unprefixed servers list is the first one\'s, listed once', async () => {
    expect(await route(p, caller, 'demo://shared')).toMatchObject({ view: { name: 'plain' }, upstream: 'demo://shared' });
    expect((await visibleResources(p, caller)).filter((r) => r.uri === 'demo://shared')).toHaveLength(1);
  });

  it('nothing routes a URI no server lists or matches, another prefix, the unprefixed form of a prefixed URI, or a dot segment from a template', async () => {
    for (const uri of ['demo://static/1', 'toolgate://nope/demo%3A%2F%2Fstatic%2F1', 'plain://items/', 'fx://docs/../../etc/passwd', 'toolgate://ev/demo%3A%2F%2Fdynamic%2F..']) {
      expect(await route(p, caller, uri), uri).toBeUndefined();
    }
  });
});

describe('a session that ends releases what it held', () => {
  const fakes = [server('ev', 'ev', ['demo://a', 'demo://b'])];

  async function subscribed(hub: PassthroughHub, s: Server, uris: string[]) {
    const d = hub.attach(s, caller);
    for (const uri of uris) {
      d.subscriptions.set(`toolgate://ev/${encodeURIComponent(uri)}`, { server: 'ev', upstream: uri });
      await hub.hold('ev', uri);
    }
    return d;
  }

  it('closing one session keeps a URI another still holds; closing the last unsubscribes upstream and forgets both', async () => {
    const calls: string[] = [];
    const hub = new PassthroughHub(catalog(fakes, calls), () => undefined);
    const one = new Server({ name: 'a', version: '1' }, { capabilities: {} });
    const two = new Server({ name: 'b', version: '1' }, { capabilities: {} });
    await subscribed(hub, one, ['demo://a', 'demo://b']);
    await subscribed(hub, two, ['demo://a']);
    expect(calls).toEqual(['subscribe ev demo://a', 'subscribe ev demo://b']);
    await one.close();
    await new Promise((r) => setImmediate(r));
    expect(calls.slice(2)).toEqual(['unsubscribe ev demo://b']);
    expect(hub.stats).toEqual({ sessions: 1, held: { ev: ['demo://a'] } });
    await two.close();
    await new Promise((r) => setImmediate(r));
    expect(calls.slice(3)).toEqual(['unsubscribe ev demo://a']);
    expect(hub.stats).toEqual({ sessions: 0, held: {} });
    hub.close();
  });

  it('a Server that never served a session (a request that opened none) is forgotten when it closes', async () => {
    const hub = new PassthroughHub(catalog(fakes), () => undefined);
    for (let i = 0; i < 50; i++) {
      const s = new Server({ name: 'x', version: '1' }, { capabilities: {} });
      hub.attach(s, caller);
      await s.close();
    }
    expect(hub.stats.sessions).toBe(0);
    hub.close();
  });
});
