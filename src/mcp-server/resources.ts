import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, type ReadResourceResult, type Resource, type Server, type ServerContext } from '@modelcontextprotocol/server';
import type { Caller } from '../auth/caller.js';
import type { Passthrough } from './passthrough.js';
import type { Downstream } from './hub.js';
import type { ServerView } from './upstream.js';
import { gatewayTemplate, gatewayUri, hasTraversal, parseGatewayUri } from './uris.js';
import { seesResource } from './visibility.js';
import { auditPassthrough } from './passthrough-audit.js';
import { capRead, isPageUri, readPage } from './read-cap.js';
import { headerRecord, sessionTag, type Era } from './server.js';
import { newId } from '../util/ids.js';
import { describeError } from '../mcp/errors.js';

const PAGE_SIZE = 50;

/** The spec's "resource not found": -32002 in 2025 (with the URI), -32602 in 2026-07-28 (the SDK's ResourceNotFoundError). */
export function notFound(era: Era, uri: string): ProtocolError {
  return era === 'modern' ? new ResourceNotFoundError(uri) : new ProtocolError(-32002 as ProtocolErrorCode, `Resource not found: ${uri}`, { uri });
}

/** A list page from an opaque cursor (an offset); a cursor the gateway did not make is invalid params. */
export function page<T>(items: T[], cursor: string | undefined): { items: T[]; nextCursor?: string } {
  let offset = 0;
  if (cursor !== undefined) {
    const m = /^o(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
    if (!m) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid cursor');
    offset = Number(m[1]);
  }
  const end = offset + PAGE_SIZE;
  return { items: items.slice(offset, end), ...(end < items.length ? { nextCursor: Buffer.from(`o${end}`, 'latin1').toString('base64url') } : {}) };
}

/** Every resource the caller may see, under the URIs /mcp lists; a URI two servers without prefix list is served by neither. */
export async function visibleResources(p: Passthrough, caller: Caller): Promise<Resource[]> {
  const all = await p.catalog.each((v) => p.catalog.resources(v));
  const count = new Map<string, number>();
  for (const { view, items } of all) if (view.prefix === '') for (const r of items) count.set(r.uri, (count.get(r.uri) ?? 0) + 1);
  return all.flatMap(({ view, items }) =>
    items
      .filter((r) => !(view.prefix === '' && (count.get(r.uri) ?? 0) > 1 && p.ambiguous(view, r.uri)))
      .map((r) => ({ ...r, uri: gatewayUri(view.prefix, r.uri) }))
      .filter((r) => seesResource(caller, view.prefix, r.uri)),
  );
}

export interface Routed {
  view: ServerView;
  upstream: string;
  listed: string;
}

/**
 * The server and its own URI for a URI /mcp listed (or a template of it gives), when the caller
 * may see it: a `toolgate://<prefix>/…` URI goes to that prefix's server, any other to the one
 * server without prefix that lists it (or whose template matches it). The URI must be one the
 * server lists or one of its served templates matches: nothing else is sent to a server.
 */
export async function route(p: Passthrough, caller: Caller, uri: string): Promise<Routed | undefined> {
  const parsed = parseGatewayUri(uri);
  const views = p.catalog.servers().filter((v) => (parsed ? v.prefix === parsed.prefix : v.prefix === ''));
  const upstream = parsed ? parsed.upstream : uri;
  const found: Routed[] = [];
  for (const view of views) {
    if (!view.resources(upstream) || !seesResource(caller, view.prefix, uri)) continue;
    try {
      const listed = (await p.catalog.resources(view)).some((r) => r.uri === upstream);
      if (listed || (await p.catalog.templates(view)).some((t) => t.matcher.match(upstream) !== null)) found.push({ view, upstream, listed: uri });
    } catch {
      // a server that cannot list cannot serve the URI
    }
  }
  return found.length === 1 ? found[0] : undefined;
}

/** resources/* on one MCP server instance (both eras). */
export function registerResources(server: Server, p: Passthrough, caller: Caller, era: Era, d: Downstream | undefined): void {
  server.setRequestHandler('resources/list', async (req) => {
    const { items, nextCursor } = page(await visibleResources(p, caller), req.params?.cursor);
    return { resources: items, ...(nextCursor ? { nextCursor } : {}) };
  });

  server.setRequestHandler('resources/templates/list', async (req) => {
    const all = await p.catalog.each((v) => p.catalog.templates(v));
    const listed = all.flatMap(({ view, items }) =>
      items.map(({ template }) => ({ ...template, uriTemplate: gatewayTemplate(view.prefix, template.uriTemplate) })).filter((t) => seesResource(caller, view.prefix, t.uriTemplate)),
    );
    const { items, nextCursor } = page(listed, req.params?.cursor);
    return { resourceTemplates: items, ...(nextCursor ? { nextCursor } : {}) };
  });

  server.setRequestHandler('resources/read', async (req, ctx) => {
    const { uri } = req.params;
    if (isPageUri(uri)) return (await readPage(p, caller, uri)) ?? Promise.reject(notFound(era, uri));
    const target = parseGatewayUri(uri)?.upstream ?? uri;
    if (hasTraversal(uri) || hasTraversal(target)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid resource URI: a dot segment (../) is refused', { uri });
    const routed = await route(p, caller, uri);
    if (!routed) throw notFound(era, uri);
    return read(p, caller, routed, ctx, era);
  });

  server.setRequestHandler('resources/subscribe', async (req) => {
    if (!d) throw new ProtocolError(ProtocolErrorCode.InvalidRequest, 'resources/subscribe needs a session: in 2026-07-28 use subscriptions/listen');
    p.hub.seen(d);
    const { uri } = req.params;
    if (d.subscriptions.has(uri)) return {};
    if (d.subscriptions.size >= p.limits.maxSubscriptionsPerSession) {
      throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `Subscription limit reached: at most ${p.limits.maxSubscriptionsPerSession} resources per session`);
    }
    const routed = hasTraversal(uri) ? undefined : await route(p, caller, uri);
    if (!routed) throw notFound(era, uri);
    d.subscriptions.set(uri, { server: routed.view.name, upstream: routed.upstream });
    try {
      await p.hub.hold(routed.view.name, routed.upstream);
    } catch (e) {
      d.subscriptions.delete(uri);
      throw e instanceof ProtocolError ? e : new ProtocolError(ProtocolErrorCode.InternalError, `subscription failed: ${describeError(e)}`);
    }
    return {};
  });

  server.setRequestHandler('resources/unsubscribe', async (req) => {
    const held = d?.subscriptions.get(req.params.uri);
    if (d && held) {
      d.subscriptions.delete(req.params.uri);
      p.hub.release(held.server, held.upstream);
    }
    return {};
  });
}

/** One read through the pool: URIs in the answer rewritten, capped, audited. */
async function read(p: Passthrough, caller: Caller, r: Routed, ctx: ServerContext, era: Era): Promise<ReadResourceResult> {
  const started = performance.now();
  const requestId = headerRecord(ctx.http?.req)['x-request-id'] ?? newId('r');
  const base = { method: 'resources/read' as const, caller, requestId, sessionId: era === 'modern' ? undefined : sessionTag(ctx.sessionId), server: r.view.name, uri: r.listed, upstreamUri: r.upstream, started };
  let result: ReadResourceResult;
  try {
    const client = await p.catalog.client(r.view.name);
    result = await client.readResource({ uri: r.upstream }, { timeout: 15_000, cacheMode: 'bypass', signal: ctx.mcpReq.signal });
  } catch (e) {
    const code = e instanceof ProtocolError ? e.code : undefined;
    auditPassthrough(p.gw.audit, { ...base, errorCode: code === undefined ? 'UNAVAILABLE' : `MCP_${code}` });
    if (code === -32002 || (code === ProtocolErrorCode.InvalidParams && e instanceof ProtocolError && typeof (e.data as { uri?: unknown } | undefined)?.uri === 'string')) throw notFound(era, r.listed);
    throw e instanceof ProtocolError ? e : new ProtocolError(ProtocolErrorCode.InternalError, `resources/read failed: ${describeError(e)}`);
  }
  const contents = result.contents.map((c) => ({ ...c, uri: gatewayUri(r.view.prefix, c.uri) }));
  const answer = JSON.stringify(contents);
  const capped = await capRead(p, caller, r.listed, contents, answer);
  auditPassthrough(p.gw.audit, { ...base, answer, truncated: capped.truncated });
  return { contents: capped.contents, ...(capped.meta ? { _meta: capped.meta } : {}) } as ReadResourceResult;
}
