import type { FastifyRequest } from 'fastify';
import { isLegacyRequest, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';

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

/** The params carry the envelope claim: a `_meta` object with the protocol-version key. */
function claims(params: unknown): boolean {
  return isObject(params) && isObject(params['_meta']) && PROTOCOL_VERSION_META_KEY in params['_meta'];
}

/** A 2025 session starts with `initialize`; any other message without a session id is refused before a session is built for it. */
export function opensSession(msg: unknown): boolean {
  if (Array.isArray(msg)) return msg.some(opensSession);
  return isObject(msg) && msg['method'] === 'initialize';
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
  const raw = req.headers['mcp-protocol-version'];
  const version = Array.isArray(raw) ? raw[0] : raw;
  // A claim-less message that names a session is a 2025 one whatever its version header says: the
  // session's transport judges that header (an unknown version is its 400).
  const sessionful = req.headers['mcp-session-id'] !== undefined;
  const msg = parsed.value;
  if ((version === undefined || sessionful || SESSION_REVISIONS.includes(version)) && claimless(msg)) return true;
  // A single message with a claim (initialize aside) is Modern, well-formed or not: the SDK's handler judges it.
  if (isObject(msg) && typeof msg['method'] === 'string' && msg['method'] !== 'initialize' && claims(msg['params'])) return false;
  return isLegacyRequest(web(), msg);
}
