import type { AuditFilter, AuditPage } from './query.js';
import type { AuditRecord, AuditSink } from './types.js';

/** Every record to each sink (the file and the Redis stream); queries are answered by the first. */
export class TeeAuditSink implements AuditSink {
  readonly query?: (filter: AuditFilter) => Promise<AuditPage>;
  private readonly all: readonly AuditSink[];

  constructor(primary: AuditSink, ...others: AuditSink[]) {
    this.all = [primary, ...others];
    const query = primary.query?.bind(primary);
    if (query) this.query = query;
  }

  write(record: AuditRecord): void {
    for (const s of this.all) s.write(record);
  }

  async durable(record: AuditRecord): Promise<void> {
    await Promise.all(this.all.map((s) => s.durable(record)));
  }

  async flush(): Promise<void> {
    await Promise.all(this.all.map((s) => s.flush()));
  }

  /** Closes every sink even when one fails, then reports the first failure. */
  async close(): Promise<void> {
    const results = await Promise.allSettled(this.all.map((s) => s.close()));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
}
