import { ProtocolError, ProtocolErrorCode, UriTemplate, type CompleteResult, type GetPromptResult, type Prompt, type Server } from '@modelcontextprotocol/server';
import type { Caller } from '../auth/caller.js';
import type { Passthrough } from './passthrough.js';
import type { ServerView } from './upstream.js';
import { hasTraversal } from './uris.js';
import { seesPrompt } from './visibility.js';
import { auditPassthrough } from './passthrough-audit.js';
import { firstKeeps, page, route, visibleTemplates } from './resources.js';
import { headerRecord, sessionTag, type Era } from './server.js';
import { newId } from '../util/ids.js';
import { describeError } from '../mcp/errors.js';

/** A prompt's listed name: `<prefix>.<name>` as for tools, the server's own with `prefix: ""`. */
const listedName = (view: ServerView, name: string) => (view.prefix === '' ? name : `${view.prefix}.${name}`);

async function visiblePrompts(p: Passthrough, caller: Caller): Promise<{ view: ServerView; prompt: Prompt; listed: string }[]> {
  const all = await p.catalog.each((v) => p.catalog.prompts(v));
  const rows = all.flatMap(({ view, items }) => items.map((prompt) => ({ view, prompt, listed: listedName(view, prompt.name) })));
  // Two servers giving one name: the first in file order keeps it (the clash is reported at import).
  return firstKeeps(rows, (r) => r.listed).filter((r) => seesPrompt(caller, r.view.prefix, r.listed));
}

const unknownPrompt = (name: string) => new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params: unknown prompt '${name}'`);

/** prompts/list, prompts/get and completion/complete on one MCP server instance (both eras). */
export function registerPrompts(server: Server, p: Passthrough, caller: Caller, era: Era): void {
  server.setRequestHandler('prompts/list', async (req) => {
    const listed = (await visiblePrompts(p, caller)).map((r) => ({ ...r.prompt, name: r.listed }));
    const { items, nextCursor } = page(listed, req.params?.cursor);
    return { prompts: items, ...(nextCursor ? { nextCursor } : {}) };
  });

  server.setRequestHandler('prompts/get', async (req, ctx): Promise<GetPromptResult> => {
    const name = req.params.name;
    const found = (await visiblePrompts(p, caller)).find((r) => r.listed === name);
    if (!found) throw unknownPrompt(name);
    const started = performance.now();
    const requestId = headerRecord(ctx.http?.req)['x-request-id'] ?? newId('r');
    const base = { method: 'prompts/get' as const, caller, requestId, sessionId: era === 'modern' ? undefined : sessionTag(ctx.sessionId), server: found.view.name, prompt: name, upstreamPrompt: found.prompt.name, started };
    try {
      const client = await p.catalog.client(found.view.name);
      const result = await client.getPrompt({ name: found.prompt.name, ...(req.params.arguments ? { arguments: req.params.arguments } : {}) }, { timeout: 15_000, signal: ctx.mcpReq.signal });
      auditPassthrough(p.gw.audit, { ...base, answer: JSON.stringify(result.messages) });
      return result;
    } catch (e) {
      const code = e instanceof ProtocolError ? e.code : undefined;
      auditPassthrough(p.gw.audit, { ...base, errorCode: code === undefined ? 'UNAVAILABLE' : `MCP_${code}` });
      throw e instanceof ProtocolError ? e : new ProtocolError(ProtocolErrorCode.InternalError, `prompts/get failed: ${describeError(e)}`);
    }
  });

  server.setRequestHandler('completion/complete', async (req, ctx): Promise<CompleteResult> => {
    const { ref, argument } = req.params;
    let serverName: string;
    let upstreamRef: typeof ref;
    if (ref.type === 'ref/prompt') {
      const found = (await visiblePrompts(p, caller)).find((r) => r.listed === ref.name);
      if (!found) throw unknownPrompt(ref.name);
      if (!(found.prompt.arguments ?? []).some((a) => a.name === argument.name)) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params: prompt '${ref.name}' has no argument '${argument.name}'`);
      }
      serverName = found.view.name;
      upstreamRef = { type: 'ref/prompt', name: found.prompt.name };
    } else {
      const target = await completedTemplate(p, caller, ref.uri);
      if (!target) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params: unknown resource template '${ref.uri}'`);
      // A plain resource URI (no template) has nothing to complete.
      if (target === 'plain') return { completion: { values: [], hasMore: false } };
      if (!new UriTemplate(target.template).variableNames.includes(argument.name)) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params: template '${ref.uri}' has no variable '${argument.name}'`);
      }
      serverName = target.view.name;
      upstreamRef = { type: 'ref/resource', uri: target.template };
    }
    const client = await p.catalog.client(serverName);
    if (!client.getServerCapabilities()?.completions) return { completion: { values: [], hasMore: false } };
    const context = req.params.context;
    return client.complete({ ref: upstreamRef, argument, ...(context ? { context } : {}) }, { timeout: 15_000, signal: ctx.mcpReq.signal });
  });
}

/**
 * The server template a `ref/resource` names: a template as /mcp lists it, or a URI a client
 * expanded from one (routed as a read would be); 'plain' for a URI a server lists as such.
 */
async function completedTemplate(p: Passthrough, caller: Caller, uri: string): Promise<{ view: ServerView; template: string } | 'plain' | undefined> {
  const listed = (await visibleTemplates(p, caller)).find((r) => r.listed === uri);
  if (listed) return { view: listed.view, template: listed.template.uriTemplate };
  if (hasTraversal(uri)) return undefined;
  const routed = await route(p, caller, uri);
  if (!routed) return undefined;
  return routed.template === undefined ? 'plain' : { view: routed.view, template: routed.template };
}
