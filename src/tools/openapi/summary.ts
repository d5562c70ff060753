/** What an openapi file became: `toolgate check` and GET /admin/openapi show it. */

export interface OpenApiOperationSummary {
  readonly tool: string;
  readonly method: string;
  readonly path: string;
  readonly sideEffect: string;
  /** A changed definition waits for an admin (calls answer TOOL_CHANGED). */
  readonly held?: true;
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
