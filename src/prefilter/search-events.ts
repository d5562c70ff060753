/**
 * Searches the prefilter answered for a session (POST /v1/route with a sessionId, find_tools on
 * /mcp), told to whoever learns from them (prefilter.learn). The searcher calls
 * `gw.searchEvents.onSearch(...)` after answering; listeners run synchronously and must not throw
 * or block (the learner only notes the event and does its storage work in the background).
 */
export interface SearchEvent {
  /** Where the search came from. */
  source?: 'find_tools' | 'route';
  /**
   * The session as the pipeline names it in the calls that follow (CallRequest.sessionId): the
   * REST body's sessionId, or sessionTag(mcp session id) on /mcp. The call that follows must
   * carry the same value to count as this search's answer.
   */
  sessionTag: string;
  /** callerKey(caller) (auth/caller.ts): whose search it was. */
  callerKey: string;
  /** The query as the client sent it; a listener keeps its analysed terms only, never this text. */
  query: string;
  /** The canonical names of the tools the search returned, best first. */
  candidates: readonly string[];
}

export type SearchListener = (e: SearchEvent) => void;
/** What find_tools calls after a search in a session. */
export type OnSearch = SearchListener;

export class SearchEvents {
  private readonly listeners = new Set<SearchListener>();

  /** Adds a listener; returns its removal. */
  listen(l: SearchListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /** Tells every listener of a search (a listener's failure never reaches the searcher). */
  onSearch(e: SearchEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch {
        // a listener's bug must not fail a search
      }
    }
  }
}
