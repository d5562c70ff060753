import type { FastifyRequest } from 'fastify';
import { isLegacyRequest, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { header } from './server.js';

/** The 2025 revisions /mcp serves with sessions (Streamable HTTP began with 2025-03-26). */
export const SESSION_REVISIONS = ['2025-11-25', '2025-06-18', '2025-03-26'];

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A single JSON-RPC request or notification whose params carry no `_meta` protocol-version claim. */
function claimless(msg: unknown): boolean {
  if (!isObject(msg) || typeof msg['method'] !== 'string') return false;
  const params = msg['params'];
  if (params === undefined) return true;
  if (!isObject(params)) return false;
  const meta = params['_meta'];
  return meta === undefined || (isObject(meta) && !(PROTOCOL_VERSION_META_KEY in meta));
}

/**
 * Whether a request to /mcp belongs to the 2025 era (sessions) rather than 2026-07-28. The SDK's
 * own predicate (`isLegacyRequest`, the classification `createMcpHandler` runs) decides; the
 * common 2025 shapes (GET/DELETE, a claim-less message under a 2025 version header or none) are
 * known legacy without it, which keeps the per-call cost of the 2025 path where it was.
 */
export async function isLegacy(req: FastifyRequest, parsed: { value: unknown } | undefined, web: () => Request): Promise<boolean> {
  if (req.method !== 'POST') return true;
  if (!parsed) return true; // no JSON body: the 2025 transport answers its own parse error
  const version = header(req.headers, 'mcp-protocol-version');
  if ((version === undefined || SESSION_REVISIONS.includes(version)) && claimless(parsed.value)) return true;
  return isLegacyRequest(web(), parsed.value);
}
