import {
  classifyInboundRequest,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  RELATED_TASK_META_KEY,
} from '@modelcontextprotocol/server';
import { MODERN_REVISION } from './modern.js';

/**
 * Whether the SDK's classifier (`classifyInboundRequest`) takes a plain 2026-07-28 `tools/call`
 * for a Modern request of that revision, at a fraction of its cost on a client's second and later
 * calls. The classifier runs four zod parses per message (as a result, an error, a request, and the
 * envelope with the client's capabilities): about a quarter of the gateway's own CPU per Modern call.
 *
 * Why a memo agrees with the SDK, for a message `msg` (JSON.parse output) whose headers the caller
 * has already matched exactly (version 2026-07-28, `Mcp-Method: tools/call`, POST), and which
 * passes `shapeOk` below:
 * - its keys are among `jsonrpc`, `id`, `method`, `params`, so the strict result and error
 *   response schemas fail (each needs `result` or `error`), and the strict request schema holds:
 *   `jsonrpc` "2.0", `id` a string or safe integer, `method` a string, `params` an object whose
 *   `_meta` (loose) has neither `progressToken` nor the related-task key, the two it types;
 * - `method` is not `initialize`, and `_meta` names 2026-07-28 as its version claim, so the
 *   classifier's answer is then decided by the envelope check alone: the 2026 envelope schema is a
 *   loose object typing only progressToken (absent), the version (fixed), clientInfo,
 *   clientCapabilities and logLevel, and requires the version and capabilities keys.
 * So two such messages whose clientInfo, clientCapabilities and logLevel serialize alike (JSON of
 * parsed JSON is one-to-one up to -0, which no schema here tells from 0) get the same answer. The
 * memo keeps the envelopes the SDK accepted; anything else is asked of the SDK, every time.
 * test/unit/mcp-modern-envelope.test.ts holds the two to agreement on hostile inputs.
 */
export function modernCallAccepted(msg: Record<string, unknown>, name: string): boolean {
  const meta = shapeOk(msg);
  if (meta === undefined) return askSdk(msg, name);
  const key = envelopeKey(meta);
  if (key !== undefined && accepted.has(key)) return true;
  const ok = askSdk(msg, name);
  if (ok && key !== undefined) remember(key);
  return ok;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const MESSAGE_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

/** The `_meta` of a message the memo may answer for (see above), or undefined. */
function shapeOk(msg: Record<string, unknown>): Record<string, unknown> | undefined {
  for (const k of Object.keys(msg)) if (!MESSAGE_KEYS.has(k)) return undefined;
  const id = msg['id'];
  if (msg['jsonrpc'] !== '2.0' || msg['method'] !== 'tools/call' || !(typeof id === 'string' || Number.isSafeInteger(id))) return undefined;
  const params = msg['params'];
  if (!isObject(params)) return undefined;
  const meta = params['_meta'];
  if (!isObject(meta) || meta[PROTOCOL_VERSION_META_KEY] !== MODERN_REVISION) return undefined;
  if ('progressToken' in meta || RELATED_TASK_META_KEY in meta) return undefined;
  return meta;
}

/** Keys longer than this are not kept (a hostile client could otherwise fill memory with them). */
const MAX_KEY_CHARS = 4096;
const MAX_ENTRIES = 256;
const accepted = new Set<string>();

/** What the SDK's envelope verdict depends on, as one string (absent keys stay absent). */
function envelopeKey(meta: Record<string, unknown>): string | undefined {
  const key = JSON.stringify({ i: meta[CLIENT_INFO_META_KEY], c: meta[CLIENT_CAPABILITIES_META_KEY], l: meta[LOG_LEVEL_META_KEY] });
  return key.length <= MAX_KEY_CHARS ? key : undefined;
}

function remember(key: string): void {
  // Few distinct clients in practice; past the bound, start again rather than grow.
  if (accepted.size >= MAX_ENTRIES) accepted.clear();
  accepted.add(key);
}

function askSdk(msg: Record<string, unknown>, name: string): boolean {
  const route = classifyInboundRequest({ httpMethod: 'POST', body: msg, protocolVersionHeader: MODERN_REVISION, mcpMethodHeader: 'tools/call', mcpNameHeader: name });
  return route.kind === 'modern' && route.classification.revision === MODERN_REVISION;
}

/** For tests: forget every remembered envelope. */
export function forgetEnvelopes(): void {
  accepted.clear();
}
