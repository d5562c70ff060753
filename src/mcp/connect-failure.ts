import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/client';
import { secretMatcher } from '../audit/secrets.js';
import { describeError } from './errors.js';
import { TransportSendError } from './guarded-transport.js';
import type { ChildExit } from './stdio-transport.js';

/** JSON-RPC code of "Unsupported protocol version" (MCP 2026-07-28 servers answer initialize with it). */
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** The Modern revisions the pool speaks (the SDK's list of them is not exported). */
export const MODERN_PROTOCOL_VERSIONS: readonly string[] = ['2026-07-28'];

/** Every revision the pool speaks, newest first. */
export const POOL_PROTOCOL_VERSIONS: readonly string[] = [...MODERN_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS];

const STDERR_LINES = 5;
const STDERR_CHARS = 800;
const BODY_CHARS = 200;
/** A lastError is shown in /admin/mcp, every 503 of the server's tools and GET /v1/tools/{name}: bounded. */
const LAST_ERROR_CHARS = 1200;
/** Revisions a server claims are named up to this many, each cut (a hostile list may be huge). */
const VERSIONS_SHOWN = 8;
const VERSION_CHARS = 40;
/** C0 and C1 controls and DEL: a server's text must not steer a terminal reading the log or the console. */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]+/g;

/**
 * A server's words as lastError carries them: secrets masked, control characters made spaces,
 * bounded. Everything a server may write (stderr, bodies, error messages, claimed revisions)
 * passes here before an operator, a log line or a caller sees it.
 */
export function lastErrorWords(text: string, secrets: ReadonlySet<string>): string {
  return cut(secretMatcher(secrets).mask(text).replace(CONTROLS, ' '), LAST_ERROR_CHARS);
}

/** What is known about a stdio child when its connect failed. */
export interface ChildFacts {
  exit: ChildExit | undefined;
  stderrTail: string;
}

/** What the wire showed of the server's revisions (a `server/discover` answer). */
export interface WireFacts {
  discoveredVersions?: readonly string[] | undefined;
  /** The transport's last error meanwhile (a stream cut for its size, say): why an answer never came. */
  lastTransportError?: string | undefined;
}

/** A failed connect + initialize, in words; `cannotSucceed` when retrying soon is pointless. */
export class ConnectError extends Error {
  override readonly name = 'ConnectError';
  constructor(message: string, readonly cannotSucceed: boolean, cause: unknown) {
    super(message, { cause });
  }
}

/** The server and toolgate share no protocol revision: an error answer to initialize or the SDK's refusal of its answer. */
export function isVersionMismatch(err: unknown): boolean {
  if (err instanceof ProtocolError && err.code === UNSUPPORTED_PROTOCOL_VERSION) return true;
  if (err instanceof Error && err.message.startsWith("Server's protocol version is not supported")) return true;
  const text = describeError(err instanceof TransportSendError ? err.cause : err);
  // Over HTTP the JSON-RPC error may come back as the body of a 400.
  return /-32022|unsupported protocol version/i.test(text);
}

/** Why connecting failed, for lastError, logs and the admin view (stderr and bodies masked and bounded). */
export function describeConnectFailure(err: unknown, child: ChildFacts | undefined, secrets: ReadonlySet<string>, wire: WireFacts = {}): ConnectError {
  const described = describeFailure(err, child, secrets, wire);
  return new ConnectError(lastErrorWords(described.message, secrets), described.cannotSucceed, err);
}

function describeFailure(err: unknown, child: ChildFacts | undefined, secrets: ReadonlySet<string>, wire: WireFacts): ConnectError {
  const mask = (text: string): string => secretMatcher(secrets).mask(text);
  const cause = err instanceof TransportSendError ? err.cause : err;
  if (isVersionMismatch(err)) {
    const data = err instanceof ProtocolError ? supportedOf(err.data, mask) : '';
    const discovered = !data && wire.discoveredVersions?.length ? ` (its server/discover offers ${versionList(wire.discoveredVersions, mask)})` : '';
    const text = describeError(cause);
    // The 1.x SDK put the code in the message; v2 keeps it in `code`.
    const what = cause instanceof ProtocolError && !text.includes(String(cause.code)) ? `${cause.code} ${text}` : text;
    return new ConnectError(
      `no common protocol version: ${cut(mask(what), BODY_CHARS)}${data}${discovered}; toolgate speaks ${POOL_PROTOCOL_VERSIONS.join(', ')}`,
      true,
      err,
    );
  }
  const http = httpErrorOf(cause);
  if (http) {
    const text = typeof http.data.text === 'string' ? http.data.text : http.message.replace(/^Error POSTing to endpoint: /, '');
    return new ConnectError(`HTTP ${http.status} from the server: ${cut(mask(text.trim()), BODY_CHARS) || '(empty body)'}`, false, err);
  }
  const errno = (cause as NodeJS.ErrnoException | undefined)?.code;
  if (cause instanceof Error && typeof (cause as NodeJS.ErrnoException).syscall === 'string' && cause.message.startsWith('spawn ')) {
    const hint = errno === 'ENOENT' ? ' (command or cwd not found)' : errno === 'EACCES' ? ' (not executable)' : '';
    return new ConnectError(`${cause.message}${hint}`, false, err);
  }
  const parts: string[] = [];
  const exit = child?.exit;
  if (exit?.signal) parts.push(`server process killed by ${exit.signal} before initialize completed`);
  else if (typeof exit?.code === 'number') parts.push(`server process exited with code ${exit.code} before initialize completed`);
  else if (err instanceof SdkError && err.code === SdkErrorCode.RequestTimeout) parts.push(`no answer to initialize in time${wire.lastTransportError ? ` (last transport error: ${mask(wire.lastTransportError)})` : ''}`);
  else parts.push(`connect failed: ${mask(describeError(cause))}`);
  const tail = child ? stderrLines(mask(child.stderrTail)) : '';
  if (tail) parts.push(`stderr: ${tail}`);
  return new ConnectError(parts.join('; '), false, err);
}

/** The last lines of a (masked) stderr tail, joined with ' | ', bounded from the end. */
export function stderrLines(text: string): string {
  const lines = text.split('\n').map((l) => l.trimEnd()).filter(Boolean).slice(-STDERR_LINES);
  const joined = lines.join(' | ');
  return joined.length <= STDERR_CHARS ? joined : `…${joined.slice(-STDERR_CHARS)}`;
}

/** The HTTP error along a short cause chain (the probe wraps a 5xx in an EraNegotiationFailed). */
function httpErrorOf(err: unknown): SdkHttpError | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 3 && current instanceof Error; depth++) {
    if (current instanceof SdkHttpError && current.status > 0) return current;
    current = current.cause;
  }
  return undefined;
}

function supportedOf(data: unknown, mask: (text: string) => string): string {
  const supported = (data as { supported?: unknown } | undefined)?.supported;
  return Array.isArray(supported) ? ` (the server speaks ${versionList(supported, mask)})` : '';
}

/** Revisions a server claims, as words: the first few, each masked and cut, and how many more. */
function versionList(versions: readonly unknown[], mask: (text: string) => string): string {
  const strings = versions.filter((v): v is string => typeof v === 'string');
  const shown = strings.slice(0, VERSIONS_SHOWN).map((v) => cut(mask(v), VERSION_CHARS));
  return strings.length > VERSIONS_SHOWN ? `${shown.join(', ')}, … (${strings.length - VERSIONS_SHOWN} more)` : shown.join(', ');
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
