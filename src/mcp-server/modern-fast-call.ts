import type { FastifyRequest } from 'fastify';
import { CLIENT_CAPABILITIES_META_KEY, isInputRequiredResult, SERVER_INFO_META_KEY, type CallToolResult, type InputRequiredResult } from '@modelcontextprotocol/server';
import { plainToolCall, type FastCall } from './fast-call.js';
import { MODERN_REVISION } from './modern.js';
import { modernCallAccepted } from './modern-envelope.js';
import { SERVER_INFO } from './server.js';

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? undefined : v);

/**
 * A 2026-07-28 `tools/call` answered straight from the pipeline, as the 2025 fast path is: only
 * when the SDK's own classifier accepts its envelope for this revision (modern-envelope.ts), the standard headers
 * repeat the body exactly (version, `Mcp-Method`, a plain `Mcp-Name`), Accept names both media
 * types, and the call is a plain one (no progress token, no requestState or input responses).
 * Anything else goes to the SDK's handler, which answers it and its errors.
 */
export function asModernFastCall(req: FastifyRequest, msg: unknown): FastCall | undefined {
  const call = plainToolCall(msg);
  if (!call) return undefined;
  const h = req.headers;
  const accept = one(h['accept']) ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  const version = one(h['mcp-protocol-version']);
  if (version !== MODERN_REVISION || one(h['mcp-method']) !== 'tools/call' || one(h['mcp-name']) !== call.name || call.name.startsWith('=?')) return undefined;
  const params = (msg as { params: Record<string, unknown> }).params;
  if (params['requestState'] !== undefined || params['inputResponses'] !== undefined) return undefined;
  return modernCallAccepted(msg as Record<string, unknown>, call.name) ? call : undefined;
}

/** A tool result as the 2026-07-28 wire carries it (what the SDK's encoder adds: resultType, the server's identity). */
export function modernResult(r: CallToolResult | InputRequiredResult): Record<string, unknown> {
  const meta = { ...r._meta, [SERVER_INFO_META_KEY]: SERVER_INFO };
  return isInputRequiredResult(r) ? { ...r, _meta: meta } : { ...r, resultType: 'complete', _meta: meta };
}

/** The client capabilities its envelope declares (already validated by the classifier). */
export function envelopeCapabilities(msg: unknown): { elicitation?: { form?: unknown; url?: unknown } } | undefined {
  const meta = (msg as { params?: { _meta?: Record<string, unknown> } }).params?._meta;
  const caps = meta?.[CLIENT_CAPABILITIES_META_KEY];
  return caps !== null && typeof caps === 'object' ? (caps as { elicitation?: { form?: unknown; url?: unknown } }) : undefined;
}
