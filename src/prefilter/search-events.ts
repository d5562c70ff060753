/**
 * A ranking a session asked for, as the gateway reports it to whoever learns from use
 * (prefilter.learn): `find_tools` on /mcp calls `onSearch` after each search it answers in a
 * session (a 2025-era /mcp or /sse session; 2026-07-28 requests have none). The listener is
 * optional, called synchronously after the answer is built, and must not throw or block (the
 * caller ignores what it throws); it must not keep the query text (term statistics only).
 */
export interface SearchEvent {
  /** Where the search came from. */
  source: 'find_tools' | 'route';
  /** The session as the pipeline's sessionId (mcp-server/server.ts sessionTag: `mcp:<16 hex>`), never the live id. */
  sessionTag: string;
  /** Whose search it was (auth/caller.ts sessionKey): what a per-caller weight cap counts by. */
  callerKey: string;
  /** The query as validated (1–2,000 characters, no control characters). */
  query: string;
  /** The candidates shown, best first, by canonical tool name (what the pipeline's call records name). */
  candidates: readonly string[];
}

export type OnSearch = (e: SearchEvent) => void;
