import type { Config } from '../config/schema.js';
import { FileAuditSink } from './file-sink.js';
import { RedisStreamSink } from './redis-stream-sink.js';
import { TeeAuditSink } from './tee-sink.js';
import type { AuditSink } from './types.js';

export const DEFAULT_AUDIT_STREAM = 'toolgate:audit';
const DEFAULT_MAX_LEN = 1_000_000;

/** The spool of undelivered stream records: a JSONL file next to the audit file. */
export function spoolPathFor(auditFile: string): string {
  return `${auditFile.replace(/\.jsonl$/, '')}.stream-spool.jsonl`;
}

/**
 * The audit file always; with Redis configured, the stream too (SPEC §1: with REDIS_URL set,
 * records also go to `toolgate:audit`, or to `audit.redisStream` when named).
 */
export function createAuditSink(config: Pick<Config, 'audit' | 'state'>, onWarning?: (msg: string, err?: unknown) => void): AuditSink {
  const file = config.audit.file ?? 'data/audit.jsonl';
  const fileSink = new FileAuditSink(file);
  const url = config.state.redis;
  if (!url) {
    if (config.audit.redisStream) onWarning?.(`audit.redisStream '${config.audit.redisStream}' is ignored: no Redis is configured (state.redis or REDIS_URL)`);
    return fileSink;
  }
  const stream = new RedisStreamSink({
    url,
    stream: config.audit.redisStream ?? DEFAULT_AUDIT_STREAM,
    maxLen: config.audit.redisStreamMaxLen ?? DEFAULT_MAX_LEN,
    spoolPath: spoolPathFor(file),
    ...(onWarning ? { onWarning } : {}),
  });
  return new TeeAuditSink(fileSink, stream);
}
