import { expect } from 'vitest';
import type { TestGateway } from './app.js';

/** One server in `GET /admin/mcp` (SPEC §6). */
export interface ServerView {
  name: string;
  transport: string;
  state: string;
  protocolVersion: string | null;
  tools: number;
  restarts: number;
  lastError: string | null;
  nextRetryAt: string | null;
}

/** Reads `GET /admin/mcp` of a gateway with an admin key; `server(name)` fails when the server is not listed. */
export function adminMcpView(gw: () => TestGateway, adminKey: string) {
  const view = async (): Promise<ServerView[]> => {
    const res = await gw().app.inject({ method: 'GET', url: '/admin/mcp', headers: { authorization: `Bearer ${adminKey}` } });
    expect(res.statusCode).toBe(200);
    return res.json<{ servers: ServerView[] }>().servers;
  };
  const server = async (name: string): Promise<ServerView> => {
    const found = (await view()).find((s) => s.name === name);
    if (!found) throw new Error(`no server ${name} in /admin/mcp`);
    return found;
  };
  return { view, server };
}
