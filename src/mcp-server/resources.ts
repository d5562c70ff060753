import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, type ReadResourceResult, type Resource, type Server, type ServerContext } from '@modelcontextprotocol/server';
import type { Caller } from '../auth/caller.js';
import type { Passthrough } from './passthrough.js';
import type { Downstream } from './hub.js';
import type { ResourceTemplate, ServerView } from './upstream.js';
import { gatewayTemplate, gatewayUri, hasTraversal, parseGatewayUri } from './uris.js';
import { routeOf } from './passthrough-templates.js';
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

/**
 * Keeps the first of items that would be listed under one name: two servers without prefix that
 * give one URI, template or prompt name clash (reported at import against the later server's
 * file, src/mcp/import.ts); the first in file order keeps it, so nothing is routed ambiguously.
 */
export function firstKeeps<T>(rows: T[], listedOf: (row: T) => string): T[] {
  const seen = new Set<string>();
  return rows.filter((r) => {
    const name = listedOf(r);
    if (seen.has(name)) return false;
    seen.add(name);
    return true;
  });
}

/** Every resource the caller may see, under the URIs /mcp lists. */
export async function visibleResources(p: Passthrough, caller: Caller): Promise<Resource[]> {
  const all = await p.catalog.each((v) => p.catalog.resources(v));
  const rows = all.flatMap(({ view, items }) => items.map((r) => ({ ...r, uri: gatewayUri(view.prefix, r.uri), prefix: view.prefix })));
  return firstKeeps(rows, (r) => r.uri)
    .filter((r) => seesResource(caller, r.prefix, r.uri))
    .map(({ prefix: _prefix, ...r }) => r);
}

/** Every template the caller may see, with its server and listed form. */
export async function visibleTemplates(p: Passthrough, caller: Caller): Promise<{ view: ServerView; template: ResourceTemplate; listed: string }[]> {
  const all = await p.catalog.each((v) => p.catalog.templates(v));
  const rows = all.flatMap(({ view, items }) => items.map(({ template }) => ({ view, template, listed: gatewayTemplate(view.prefix, template.uriTemplate) })));
  return firstKeeps(rows, (r) => r.listed).filter((r) => seesResource(caller, r.view.prefix, r.listed));
}

export interface Routed {
  view: ServerView;
  upstream: string;
  listed: string;
  /** The server's template the URI was expanded from (a URI no server lists as such). */
  template?: string;
}

/**
 * The server and its own URI for a URI /mcp listed, or one a client expanded from a listed
 * template, when the caller may see it. A `toolgate://<prefix>/…` URI goes to that prefix's
 * server, any other to the servers without prefix; the first (in file order) that lists the URI
 * serves it, else the first whose template (as /mcp lists it) the URI matches, the server's URI
 * then being what its own template gives for the same values (passthrough-templates.ts). The URI
 * must be one a server lists or one of its served templates matches: nothing else is sent to a
 * server, and never one with a dot segment.
 */
export async function route(p: Passthrough, caller: Caller, uri: string): Promise<Routed | undefined> {
  const parsed = parseGatewayUri(uri);
  const views = p.catalog.servers().filter((v) => (parsed ? v.prefix === parsed.prefix : v.prefix === ''));
  let fromTemplate: Routed | undefined;
  for (const view of views) {
    if (!seesResource(caller, view.prefix, uri)) continue;
    try {
      const own = parsed ? parsed.upstream : uri;
      if (view.resources(own) && (await p.catalog.resources(view)).some((r) => r.uri === own)) return { view, upstream: own, listed: uri };
      if (fromTemplate) continue;
      for (const { template } of await p.catalog.templates(view)) {
        const upstream = routeOf(template, view.prefix)(uri);
        if (upstream !== undefined && !hasTraversal(upstream) && view.resources(upstream)) {
          fromTemplate = { view, upstream, listed: uri, template: template.uriTemplate };
          break;
        }
      }
    } catch {
      // a server that cannot list cannot serve the URI
    }
  }
  return fromTemplate;
}

/** resources/* on one MCP server instance (both eras). */
export function registerResources(server: Server, p: Passthrough, caller: Caller, era: Era, d: Downstream | undefined): void {
  server.setRequestHandler('resources/list', async (req) => {
    const { items, nextCursor } = page(await visibleResources(p, caller), req.params?.cursor);
    return { resources: items, ...(nextCursor ? { nextCursor } : {}) };
  });

  server.setRequestHandler('resources/templates/list', async (req) => {
    const listed = (await visibleTemplates(p, caller)).map((r) => ({ ...r.template, uriTemplate: r.listed }));
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
