import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startGateway, type TestGateway, type TestGatewayOptions } from './app.js';

// The v2 SDK clients of the passthrough tests (resources, prompts, the red-team file): one per era
// and key against a gateway's /mcp, every one closed at the end.

export type Era = 'legacy' | 'modern';

export interface McpClients {
  /** A connected client of `key` (2026-07-28 pinned for `modern`). */
  connect(era: Era, key: string): Promise<Client>;
  /** Closes every client connect() gave. */
  closeAll(): Promise<void>;
}

/** `base()`: the gateway's listening URL (known once beforeAll has run). */
export function mcpClients(base: () => string, name: string): McpClients {
  const open: Client[] = [];
  return {
    async connect(era, key) {
      const client = new Client({ name, version: '1.0.0' }, era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
      await client.connect(new StreamableHTTPClientTransport(new URL(`${base()}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
      open.push(client);
      return client;
    },
    async closeAll() {
      await Promise.all(open.splice(0).map((c) => c.close().catch(() => undefined)));
    },
  };
}

/** Every resource /mcp lists to the client, following nextCursor (at most 50 pages). */
export async function listAllResources(c: Client): Promise<{ uri: string; name: string }[]> {
  const out: { uri: string; name: string }[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const r = await c.listResources(cursor === undefined ? {} : { cursor }, { cacheMode: 'bypass' });
    out.push(...r.resources);
    cursor = r.nextCursor;
    pages++;
  } while (cursor !== undefined && pages < 50);
  return out;
}

/** A gateway listening on 127.0.0.1 (port 0) with the clients of its passthrough tests. */
export interface PassthroughGateway {
  gw: TestGateway;
  base: string;
  clients: McpClients;
  /** Closes the clients, then the gateway. */
  close(): Promise<void>;
}

export async function startPassthroughGateway(opts: TestGatewayOptions, clientName: string): Promise<PassthroughGateway> {
  const gw = await startGateway(opts);
  const base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  const clients = mcpClients(() => base, clientName);
  return {
    gw,
    base,
    clients,
    async close() {
      await clients.closeAll();
      await gw.close();
    },
  };
}
