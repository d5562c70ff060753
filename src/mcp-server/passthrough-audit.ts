import { auditRecord } from '../audit/record.js';
import { identityFields } from '../audit/identity.js';
import type { AuditSink } from '../audit/types.js';
import type { Caller } from '../auth/caller.js';
import { sha256Hex } from '../util/hash.js';

/** What one resources/read or prompts/get that reached a server leaves in the audit log: never the content. */
export interface PassthroughAudit {
  method: 'resources/read' | 'prompts/get';
  caller: Caller;
  requestId: string;
  sessionId: string | undefined;
  server: string;
  /** resources/read: the URI as listed and as the server names it. */
  uri?: string;
  upstreamUri?: string;
  /** prompts/get: the name as listed and as the server names it. */
  prompt?: string;
  upstreamPrompt?: string;
  /** The JSON of the server's answer (hashed and counted, never written). */
  answer?: string;
  errorCode?: string;
  started: number;
  truncated?: boolean;
}

export function auditPassthrough(sink: AuditSink, a: PassthroughAudit): void {
  const bytes = a.answer === undefined ? undefined : Buffer.byteLength(a.answer);
  sink.write(
    auditRecord({
      event: 'call',
      mcpMethod: a.method,
      requestId: a.requestId,
      sessionId: a.sessionId,
      caller: a.caller.id,
      ...identityFields(a.caller.identity),
      server: a.server,
      ...(a.uri !== undefined ? { uri: a.uri, upstreamUri: a.upstreamUri } : {}),
      ...(a.prompt !== undefined ? { prompt: a.prompt, upstreamPrompt: a.upstreamPrompt } : {}),
      outcome: a.errorCode === undefined ? 'ok' : 'error',
      ...(a.errorCode !== undefined ? { errorCode: a.errorCode } : {}),
      ...(bytes !== undefined ? { bytes, responseHash: `sha256:${sha256Hex(a.answer as string)}` } : {}),
      ...(a.truncated ? { truncated: true } : {}),
      durationMs: Math.round(performance.now() - a.started),
    }),
  );
}
