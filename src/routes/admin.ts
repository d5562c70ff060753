import type { FastifyInstance } from 'fastify';
import type { Gateway } from '../gateway.js';
import { ReloadResult, errorResponses } from './schemas.js';

/** Admin routes: reload tools.d and see the last result. */
export async function adminRoutes(app: FastifyInstance, opts: { gw: Gateway }): Promise<void> {
  const { gw } = opts;
  const schema = (summary: string) => ({ summary, tags: ['admin'], response: { 200: ReloadResult, ...errorResponses(401, 403) } });
  app.get('/admin/reload', { config: { role: 'admin' }, schema: schema('The last reload of tools.d') }, async () => gw.lastReload ?? (await gw.reload()));
  app.post('/admin/reload', { config: { role: 'admin' }, schema: schema('Reload tools.d now') }, async () => gw.reload());
}
