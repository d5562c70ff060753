import type { FastifyInstance } from 'fastify';
import type { Gateway } from '../gateway.js';
import { GatewayError } from '../errors.js';
import { auditRecord } from '../audit/record.js';
import { mcpAdminView } from '../mcp/admin-view.js';
import { McpAdminView, OpenApiAdminView, ReloadResult, errorResponses } from './schemas.js';

/** Admin routes: reload tools.d and see the last result; the MCP servers' states; put a disabled backend or a held MCP tool back into service. */
export async function adminRoutes(app: FastifyInstance, opts: { gw: Gateway }): Promise<void> {
  const { gw } = opts;
  const schema = (summary: string) => ({ summary, tags: ['admin'], response: { 200: ReloadResult, ...errorResponses(401, 403) } });
  app.get('/admin/reload', { config: { role: 'admin' }, schema: schema('The last reload of tools.d') }, async () => gw.lastReload ?? (await gw.reload()));
  app.post('/admin/reload', { config: { role: 'admin' }, schema: schema('Reload tools.d now') }, async () => gw.reload());

  app.get(
    '/admin/mcp',
    {
      config: { role: 'admin' },
      schema: { summary: 'Every declared MCP server: state, protocol version, tools, restarts and why it is not up', tags: ['admin'], response: { 200: McpAdminView, ...errorResponses(401, 403) } },
    },
    async () => {
      const tools = new Map<string, number>();
      for (const t of gw.registry.tools) if (t.mcp) tools.set(t.mcp.server, (tools.get(t.mcp.server) ?? 0) + 1);
      return mcpAdminView(gw.mcpPool.statuses(), (server) => tools.get(server) ?? 0);
    },
  );

  app.get(
    '/admin/openapi',
    {
      config: { role: 'admin' },
      schema: { summary: 'Every kind: openapi file: its operations (held ones marked) and the skipped ones with why', tags: ['admin'], response: { 200: OpenApiAdminView, ...errorResponses(401, 403) } },
    },
    async () => ({ documents: gw.registry.openapi.map(({ specPath: _path, ...d }) => d) }),
  );

  app.post<{ Params: { name: string; id: string } }>(
    '/admin/tools/:name/backends/:id/enable',
    {
      config: { role: 'admin' },
      schema: {
        summary: 'Put a backend disabled by a 401/403 back into service',
        tags: ['admin'],
        params: { type: 'object', properties: { name: { type: 'string' }, id: { type: 'string' } }, required: ['name', 'id'] },
        response: errorResponses(401, 403, 404),
      },
    },
    async (req) => {
      const tool = gw.registry.get(req.params.name);
      if (!tool) throw new GatewayError('TOOL_NOT_FOUND', `no tool named '${req.params.name}'`);
      if (!tool.backends.some((b) => b.id === req.params.id)) throw new GatewayError('NOT_FOUND', `'${tool.name}' has no backend '${req.params.id}'`);
      const wasDisabled = gw.health.enable(tool, req.params.id);
      gw.audit.write(auditRecord({ event: 'admin', action: 'enable-backend', caller: req.caller.id, requestId: req.id, tool: tool.name, backend: req.params.id, wasDisabled }));
      return { tool: tool.name, backend: req.params.id, wasDisabled, state: gw.health.view(tool, tool.backends.find((b) => b.id === req.params.id)!).state };
    },
  );

  app.post<{ Params: { name: string } }>(
    '/admin/tools/:name/accept',
    {
      config: { role: 'admin' },
      schema: {
        summary: 'Accept the changed definition of an MCP tool or OpenAPI operation held by its pin (TOOL_CHANGED)',
        tags: ['admin'],
        params: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        response: errorResponses(401, 403, 404, 409),
      },
    },
    async (req) => {
      const tool = gw.registry.get(req.params.name);
      if (!tool) throw new GatewayError('TOOL_NOT_FOUND', `no tool named '${req.params.name}'`);
      const change = tool.mcp?.held ? gw.mcp.accept(tool.mcp.server, tool.mcp.tool) : tool.openapi?.held ? gw.openapi.accept(tool.source.file, tool.name) : undefined;
      if (!change) throw new GatewayError('CONFLICT', `'${tool.name}' is not held: there is no changed definition to accept`);
      const { oldHash, newHash } = change;
      const from = tool.mcp ? { server: tool.mcp.server } : tool.openapi ? { document: tool.openapi.spec, file: tool.source.file } : {};
      await gw.audit.durable(auditRecord({ event: 'admin', action: 'accept-tool', caller: req.caller.id, requestId: req.id, tool: tool.name, ...from, oldHash, newHash }));
      const { generation } = await gw.reload(); // the accepted definition serves from this generation on
      return { tool: tool.name, accepted: true, oldHash, newHash, generation };
    },
  );
}
