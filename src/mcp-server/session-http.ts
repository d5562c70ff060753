import type { FastifyRequest } from 'fastify';
import type { Gateway } from '../gateway.js';
import { toMcp } from '../tools/formats.js';
import { sha256Hex } from '../util/hash.js';
import { SESSION_REVISIONS } from './era.js';
import { jsonRpcError } from './http.js';
import type { InitParams } from './session-store.js';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** What an initialize asks (the first one of a batch): stored with a shared session, replayed on a rebuild. */
export function initParamsOf(msg: unknown): InitParams | undefined {
  const init = (Array.isArray(msg) ? msg : [msg]).find((m) => isObject(m) && m['method'] === 'initialize') as Record<string, unknown> | undefined;
  const p = init?.['params'];
  if (!isObject(p) || typeof p['protocolVersion'] !== 'string') return undefined;
  return { protocolVersion: p['protocolVersion'], capabilities: isObject(p['capabilities']) ? p['capabilities'] : {}, clientInfo: isObject(p['clientInfo']) ? p['clientInfo'] : {} };
}

/** The level a `logging/setLevel` in the message (or batch) sets, when valid. */
export function levelSetBy(msg: unknown): string | undefined {
  for (const m of Array.isArray(msg) ? msg : [msg]) {
    if (!isObject(m) || m['method'] !== 'logging/setLevel' || !isObject(m['params'])) continue;
    const level = m['params']['level'];
    if (typeof level === 'string' && LEVELS.includes(level)) return level;
  }
  return undefined;
}

/** The resource URIs the message (or batch) subscribes to and unsubscribes from. */
export function subscriptionsChangedBy(msg: unknown): { subscribe: string[]; unsubscribe: string[] } | undefined {
  const out = { subscribe: [] as string[], unsubscribe: [] as string[] };
  for (const m of Array.isArray(msg) ? msg : [msg]) {
    if (!isObject(m) || !isObject(m['params']) || typeof m['params']['uri'] !== 'string') continue;
    if (m['method'] === 'resources/subscribe') out.subscribe.push(m['params']['uri']);
    if (m['method'] === 'resources/unsubscribe') out.unsubscribe.push(m['params']['uri']);
  }
  return out.subscribe.length + out.unsubscribe.length > 0 ? out : undefined;
}

/** The GET-stream checks the SDK's transport makes, for the shared stream it does not serve. */
export function refuseSharedGet(req: FastifyRequest): Response | undefined {
  if (!req.headers.accept?.includes('text/event-stream')) return jsonRpcError(406, -32000, 'Not Acceptable: Client must accept text/event-stream');
  const v = req.headers['mcp-protocol-version'];
  if (typeof v === 'string' && !SESSION_REVISIONS.includes(v)) return jsonRpcError(400, -32000, `Bad Request: Unsupported protocol version: ${v} (supported versions: ${SESSION_REVISIONS.join(', ')})`);
  return undefined;
}

/** The tool catalog's digest: the same on every replica that loaded the same tools.d. */
export function catalogDigest(gw: Gateway): string {
  const tools = gw.registry.tools.map((t) => JSON.stringify(toMcp(t))).sort();
  return sha256Hex(tools.join('\n')).slice(0, 32);
}
