/** Counts work in progress so a shutdown can wait for it, with a bound. */
export class InFlight {
  private n = 0;
  private waiters: (() => void)[] = [];

  get count(): number {
    return this.n;
  }

  /** Marks one unit of work begun; the returned function ends it (calling it again does nothing). */
  enter(): () => void {
    this.begin();
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.end();
    };
  }

  /** One unit begun, for a caller that ends it exactly once with `end` (the per-request path: no closure). */
  begin(): void {
    this.n++;
  }

  end(): void {
    this.n--;
    if (this.n === 0 && this.waiters.length > 0) for (const w of this.waiters.splice(0)) w();
  }

  /** Resolves true once nothing is in flight, or false when `timeoutMs` passes first. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.n === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(done);
    });
  }
}
