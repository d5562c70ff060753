/**
 * Bounds how many MCP servers connect at once (mcp.startConcurrency): a spawn and its
 * initialize handshake take a slot, held for that one attempt only (a crash-looping server gives
 * it back as soon as its attempt fails, and waits out its backoff without one). First come,
 * first served. A hundred servers in tools.d start a few at a time instead of forking a hundred
 * Node processes onto two cores together.
 */
export class StartGate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`start concurrency must be a positive integer, not ${limit}`);
  }

  /** Connects in flight now / waiting for a slot (status, tests). */
  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** A new bound (reload); extra room is handed out at once. */
  resize(limit: number): void {
    this.limit = limit;
    this.dispatch();
  }

  /** Runs `fn` in a slot: waits for one, gives it back however `fn` ends. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active < this.limit) this.active++;
    else await new Promise<void>((grant) => this.waiting.push(grant));
    try {
      return await fn();
    } finally {
      this.active--;
      this.dispatch();
    }
  }

  private dispatch(): void {
    while (this.active < this.limit && this.waiting.length > 0) {
      this.active++;
      this.waiting.shift()?.();
    }
  }
}
