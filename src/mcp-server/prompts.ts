import { ProtocolError, ProtocolErrorCode, type CompleteResult, type GetPromptResult, type Prompt, type Server } from '@modelcontextprotocol/server';
import type { Caller } from '../auth/caller.js';
import type { Passthrough } from './passthrough.js';
import type { ServerView } from './upstream.js';
import { gatewayTemplate } from './uris.js';
import { seesPrompt, seesResource } from './visibility.js';
import { auditPassthrough } from './passthrough-audit.js';
import { page, route } from './resources.js';
import { headerRecord, sessionTag, type Era } from './server.js';
import { newId } from '../util/ids.js';
import { describeError } from '../mcp/errors.js';

/** A prompt's listed name: `<prefix>.<name>` as for tools, the server's own with `prefix: ""`. */
const listedName = (view: ServerView, name: string) => (view.prefix === '' ? name : `${view.prefix}.${name}`);

async function visiblePrompts(p: Passthrough, caller: Caller): Promise<{ view: ServerView; prompt: Prompt; listed: string }[]> {
  const all = await p.catalog.each((v) => p.catalog.prompts(v));
  const rows = all.flatMap(({ view, items }) => items.map((prompt) => ({ view, prompt, listed: listedName(view, prompt.name) })));
  const count = new Map<string, number>();
  for (const r of rows) count.set(r.listed, (count.get(r.listed) ?? 0) + 1);
  // Two servers giving one name: served by neither (said once), as with clashing tool names.
  return rows.filter((r) => ((count.get(r.listed) ?? 0) > 1 ? !p.ambiguous(r.view, r.listed) : true) && seesPrompt(caller, r.view.prefix, r.listed));
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
      const all = await p.catalog.each((v) => p.catalog.templates(v));
      const hit = all.flatMap(({ view, items }) => items.filter((t) => gatewayTemplate(view.prefix, t.template.uriTemplate) === ref.uri && seesResource(caller, view.prefix, ref.uri)).map((t) => ({ view, t })));
      // A plain resource URI (no template) has nothing to complete; one that is not served is unknown.
      if (hit.length !== 1) {
        if (!(await route(p, caller, ref.uri))) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params: unknown resource template '${ref.uri}'`);
        return { completion: { values: [], hasMore: false } };
      }
      const { view, t } = hit[0] as { view: ServerView; t: { template: { uriTemplate: string }; matcher: { variableNames: string[] } } };
      if (!t.matcher.variableNames.includes(argument.name)) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params: template '${ref.uri}' has no variable '${argument.name}'`);
      }
      serverName = view.name;
      upstreamRef = { type: 'ref/resource', uri: t.template.uriTemplate };
    }
    const client = await p.catalog.client(serverName);
    if (!client.getServerCapabilities()?.completions) return { completion: { values: [], hasMore: false } };
    const context = req.params.context;
    return client.complete({ ref: upstreamRef, argument, ...(context ? { context } : {}) }, { timeout: 15_000, signal: ctx.mcpReq.signal });
  });
}
