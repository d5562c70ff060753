/**
 * The open `subscriptions/listen` streams of each caller, bounded like its 2025 sessions and /sse
 * streams: opening one more ends that caller's oldest. The SDK's own limit (1,024) is one for the
 * whole handler, which a single key could fill and so refuse every other key's streams.
 */
export class ListenStreams {
  /** Per caller, each stream's end, oldest first (a Set keeps insertion order). */
  private readonly byCaller = new Map<string, Set<() => void>>();

  constructor(private readonly perCaller: number) {}

  /** Registers an open stream; `end` closes it; `closed` is to be called when it has closed (it must, once). */
  add(callerId: string, end: () => void): () => void {
    let mine = this.byCaller.get(callerId);
    if (!mine) this.byCaller.set(callerId, (mine = new Set()));
    const own = mine;
    while (own.size >= this.perCaller) {
      const oldest = own.values().next().value as () => void;
      own.delete(oldest);
      oldest();
    }
    own.add(end);
    return () => {
      own.delete(end);
      if (own.size === 0 && this.byCaller.get(callerId) === own) this.byCaller.delete(callerId);
    };
  }

  /** Streams open now for the caller. */
  count(callerId: string): number {
    return this.byCaller.get(callerId)?.size ?? 0;
  }
}
