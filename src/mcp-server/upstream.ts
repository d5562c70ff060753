import { ProtocolError, ProtocolErrorCode, UriTemplate, type ListResourceTemplatesResult, type Prompt, type Resource } from '@modelcontextprotocol/server';

export type ResourceTemplate = ListResourceTemplatesResult['resourceTemplates'][number];
import type { Client } from '@modelcontextprotocol/client';
import type { Gateway } from '../gateway.js';
import type { McpSession } from '../mcp/session.js';
import { describeError } from '../mcp/errors.js';
import type { McpServerEntry } from '../tools/mcp-file.js';
import { ownFilter, type OwnFilter } from './visibility.js';
import { inGatewayScheme } from './uris.js';
import { allPages } from '../mcp/pages.js';

/** Bound of one passthrough request to a server (connecting included). */
export const PASSTHROUGH_TIMEOUT_MS = 15_000;

/** A declared server as the passthrough sees it. */
export interface ServerView {
  readonly name: string;
  /** What its names and URIs start with: the file's `prefix`, else the server name; '' for none. */
  readonly prefix: string;
  readonly resources: OwnFilter;
  readonly prompts: OwnFilter;
}

type Kind = 'resources' | 'templates' | 'prompts';
interface Cached {
  resources?: Promise<Resource[]>;
  templates?: Promise<{ template: ResourceTemplate; matcher: UriTemplate }[]>;
  prompts?: Promise<Prompt[]>;
}

const viewCache = new WeakMap<McpServerEntry, ServerView>();
function viewOf(entry: McpServerEntry): ServerView {
  let v = viewCache.get(entry);
  if (!v) {
    const { spec } = entry;
    v = { name: spec.name, prefix: spec.prefix ?? spec.name, resources: ownFilter(spec.resources), prompts: ownFilter(spec.prompts) };
    viewCache.set(entry, v);
  }
  return v;
}

/**
 * The servers' resources, templates and prompts, listed through the pool's sessions and kept
 * until the server says its list changed (or its session restarts): routing a read or a get
 * needs them, and a list of every server per request would be slow. A server that fails to
 * answer is left out of a list (and asked again next time), never failing the others.
 */
export class UpstreamCatalog {
  private readonly cache = new Map<string, Cached>();
  private readonly warned = new Set<string>();

  constructor(
    private readonly gw: Gateway,
    private readonly warn: (msg: string, fields: object) => void,
  ) {
    gw.mcpPool.on('state', ({ server, state }) => {
      if (state === 'ready' || state === 'closed') this.cache.delete(server);
    });
  }

  /** The declared servers, in file order. */
  servers(): ServerView[] {
    return this.gw.registry.servers.map(viewOf);
  }

  byName(name: string): ServerView | undefined {
    return this.servers().find((s) => s.name === name);
  }

  invalidate(server: string, kind: 'resources' | 'prompts'): void {
    const c = this.cache.get(server);
    if (!c) return;
    if (kind === 'resources') {
      delete c.resources;
      delete c.templates;
    } else delete c.prompts;
  }

  /** The server's ready session (connecting first): passthrough requests go over it. */
  async session(server: string): Promise<McpSession> {
    try {
      return await this.gw.mcpPool.upstream(server, Date.now() + PASSTHROUGH_TIMEOUT_MS);
    } catch (e) {
      throw new ProtocolError(ProtocolErrorCode.InternalError, `MCP server '${server}' is not available: ${describeError(e)}`);
    }
  }

  async client(server: string): Promise<Client> {
    return (await this.session(server)).sdk;
  }

  async resources(view: ServerView): Promise<Resource[]> {
    const items = await this.cached(view, 'resources', async (c) => {
      if (!c.getServerCapabilities()?.resources) return [];
      return allPages((cursor) => c.listResources(cursor === undefined ? {} : { cursor }, opts()).then((r) => [r.resources, r.nextCursor]));
    });
    return items.filter((r) => view.resources(r.uri) && this.unambiguous(view, r.uri));
  }

  async templates(view: ServerView): Promise<{ template: ResourceTemplate; matcher: UriTemplate }[]> {
    const items = await this.cached(view, 'templates', async (c) => {
      if (!c.getServerCapabilities()?.resources) return [];
      const all = await allPages((cursor) => c.listResourceTemplates(cursor === undefined ? {} : { cursor }, opts()).then((r) => [r.resourceTemplates, r.nextCursor]));
      return all.flatMap((template) => {
        try {
          return [{ template, matcher: new UriTemplate(template.uriTemplate) }];
        } catch {
          return []; // a template the SDK cannot parse cannot be routed
        }
      });
    });
    return items.filter((t) => view.resources(t.template.uriTemplate) && this.unambiguous(view, t.template.uriTemplate));
  }

  async prompts(view: ServerView): Promise<Prompt[]> {
    const items = await this.cached(view, 'prompts', async (c) => {
      if (!c.getServerCapabilities()?.prompts) return [];
      return allPages((cursor) => c.listPrompts(cursor === undefined ? {} : { cursor }, opts()).then((r) => [r.prompts, r.nextCursor]));
    });
    return items.filter((p) => view.prompts(p.name));
  }

  /** Each server's answer, a failing one left out (and logged). */
  async each<T>(list: (view: ServerView) => Promise<T[]>): Promise<{ view: ServerView; items: T[] }[]> {
    const views = this.servers();
    const settled = await Promise.allSettled(views.map(list));
    return views.flatMap((view, i) => {
      const s = settled[i] as PromiseSettledResult<T[]>;
      if (s.status === 'fulfilled') return [{ view, items: s.value }];
      this.warn('MCP server left out of a passthrough list', { server: view.name, error: describeError(s.reason) });
      return [];
    });
  }

  /**
   * An unprefixed server's URI in the gateway's scheme would be read as another server's:
   * not served (and said once).
   */
  private unambiguous(view: ServerView, uri: string): boolean {
    if (view.prefix !== '' || !inGatewayScheme(uri)) return true;
    const key = `${view.name}\u0000${uri}`;
    if (!this.warned.has(key)) {
      this.warned.add(key);
      this.warn('resource not served: a server without prefix lists a URI in the toolgate: scheme', { server: view.name, uri });
    }
    return false;
  }

  private async cached<T>(view: ServerView, kind: Kind, load: (c: Client) => Promise<T>): Promise<T> {
    let c = this.cache.get(view.name);
    if (!c) this.cache.set(view.name, (c = {}));
    const slot = c as Record<Kind, Promise<T> | undefined>;
    let p = slot[kind];
    if (!p) {
      const holder = c;
      p = this.client(view.name).then(load);
      slot[kind] = p;
      // A failure is not kept: the next request asks again.
      p.catch(() => {
        if ((holder as Record<Kind, Promise<T> | undefined>)[kind] === p) delete (holder as Record<Kind, unknown>)[kind];
      });
    }
    return p;
  }
}

const opts = () => ({ timeout: PASSTHROUGH_TIMEOUT_MS, cacheMode: 'bypass' as const });

