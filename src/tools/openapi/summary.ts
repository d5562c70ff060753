import type { auditFindings } from '../../mcp/hold-view.js';

/** What an openapi file became: `toolgate check` and GET /admin/openapi show it. */

export interface OpenApiOperationSummary {
  readonly tool: string;
  readonly method: string;
  readonly path: string;
  readonly sideEffect: string;
  /** A changed definition, or one with findings, waits for an admin (calls answer TOOL_CHANGED). */
  readonly held?: true;
  readonly heldReason?: 'changed' | 'poisoned';
  /** With `held`: false when no definition was ever accepted (listed nowhere). */
  readonly listed?: boolean;
  readonly oldHash?: string | null;
  readonly newHash?: string;
  /** With `held`: the definition checks' findings (kind, where, offsets; never the text), at most 64. */
  readonly findings?: readonly ReturnType<typeof auditFindings>[number][];
  readonly findingsOmitted?: number;
  /** With `held`: the held definition (name, description, schemas) as the document gives it. */
  readonly definition?: Readonly<Record<string, unknown>>;
}

/** An operation left out, and why (the document's file or URL, line and JSON pointer). */
export interface SkippedOperation {
  /** `METHOD /path`, when known. */
  readonly operation: string;
  readonly tool?: string;
  readonly file: string;
  readonly line?: number;
  readonly path: string;
  readonly reason: string;
}

export interface OpenApiSummary {
  /** The tools.d file. */
  readonly file: string;
  readonly name: string;
  /** The document's path or URL. */
  readonly source: string;
  /** A `spec:` document's absolute path (the watcher watches its directory). */
  readonly specPath?: string;
  readonly version: string;
  readonly operations: readonly OpenApiOperationSummary[];
  readonly skipped: readonly SkippedOperation[];
}

/** Why an operation was skipped, without the operation or a trailing "skipped" its reason may repeat. */
export function skipReason(s: SkippedOperation): string {
  const r = s.operation && s.reason.startsWith(`${s.operation}: `) ? s.reason.slice(s.operation.length + 2) : s.reason;
  return r.replace(/: skipped(?: \((.*)\))?$/, (_m, why: string | undefined) => (why ? ` (${why})` : ''));
}
