import { ProtocolError, ProtocolErrorCode, type Server, type ServerCapabilities } from '@modelcontextprotocol/server';
import type { Caller } from '../auth/caller.js';
import type { Gateway } from '../gateway.js';
import { PassthroughHub, type ModernNotifier } from './hub.js';
import { UpstreamCatalog } from './upstream.js';
import { registerResources, route } from './resources.js';
import { registerPrompts } from './prompts.js';
import type { Era } from './server.js';

/** What /mcp declares beside tools, in both eras: the servers' resources, prompts, completions and logging pass through. */
export const PASSTHROUGH_CAPABILITIES: ServerCapabilities = {
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  completions: {},
  logging: {},
};

/**
 * Resources, resource templates, prompts, completions and logging of every declared MCP server
 * through /mcp (README, MCP, "Resources, prompts, completions and logging"). One per /mcp plugin.
 */
export class Passthrough {
  readonly catalog: UpstreamCatalog;
  readonly hub: PassthroughHub;
  readonly limits: { maxReadBytes: number; maxSubscriptionsPerSession: number };

  constructor(
    readonly gw: Gateway,
    log: { warn(obj: object, msg: string): void },
  ) {
    this.limits = gw.config.mcp.resources;
    const warn = (msg: string, fields: object) => log.warn(fields, msg);
    this.catalog = new UpstreamCatalog(gw, warn);
    this.hub = new PassthroughHub(this.catalog, warn);
    gw.mcpPool.on('passthrough', this.onEvent);
    gw.mcpPool.on('state', this.onState);
  }

  private readonly onEvent = (e: Parameters<PassthroughHub['onEvent']>[0]) => this.hub.onEvent(e);
  private readonly onState = ({ server, state }: { server: string; state: string }) => {
    if (state === 'ready') void this.hub.restore(server);
  };

  /** 2026-07-28 listen streams hear list changes and updates through this. */
  set modern(n: ModernNotifier) {
    this.hub.modern = n;
  }

  /** Registers the passthrough's handlers on one MCP server instance for `caller`. */
  register(server: Server, caller: Caller, era: Era): void {
    const d = era === 'modern' ? undefined : this.hub.attach(server, caller);
    registerResources(server, this, caller, era, d);
    registerPrompts(server, this, caller, era);
    server.setRequestHandler('logging/setLevel', async (req) => {
      if (d) {
        this.hub.seen(d);
        await this.hub.setLevel(d, req.params.level).catch((e: unknown) => {
          throw e instanceof ProtocolError ? e : new ProtocolError(ProtocolErrorCode.InternalError, 'logging/setLevel could not be applied upstream');
        });
      }
      return {};
    });
  }

  /**
   * A 2026-07-28 `subscriptions/listen`: its `resourceSubscriptions` kept to the URIs the caller
   * may see (others are dropped, as unknown ones), bounded like a session's subscriptions (more
   * URIs: refused), and held upstream while the stream is open. Returns the release, to call when
   * the stream closes, or the refusal.
   */
  async listen(caller: Caller, message: unknown): Promise<(() => void) | { readonly refused: string }> {
    const params = (message as { params?: { notifications?: { resourceSubscriptions?: unknown } } }).params;
    const asked = params?.notifications?.resourceSubscriptions;
    if (!Array.isArray(asked) || !params?.notifications) return () => undefined;
    const uris = [...new Set(asked.filter((u): u is string => typeof u === 'string'))];
    // Refused as resources/subscribe past the bound is, not cut silently: the client would miss updates it asked for.
    if (uris.length > this.limits.maxSubscriptionsPerSession) return { refused: `Subscription limit reached: at most ${this.limits.maxSubscriptionsPerSession} resources per session` };
    const kept: string[] = [];
    const held: { server: string; upstream: string }[] = [];
    for (const uri of uris) {
      const r = await route(this, caller, uri);
      if (!r) continue;
      try {
        await this.hub.hold(r.view.name, r.upstream);
        held.push({ server: r.view.name, upstream: r.upstream });
        kept.push(uri);
      } catch {
        // not subscribable upstream: left out of the stream's filter
      }
    }
    params.notifications.resourceSubscriptions = kept;
    return () => held.forEach((h) => this.hub.release(h.server, h.upstream));
  }

  close(): void {
    this.gw.mcpPool.off('passthrough', this.onEvent);
    this.gw.mcpPool.off('state', this.onState);
    this.hub.close();
  }
}
